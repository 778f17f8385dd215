package expo

import (
	"fmt"
	"mime"
	"net/http"

	"github.com/prometheus/common/expfmt"

	"github.com/ttftop/ttftop/sanitize"
)

// Accept headers sent with a scrape.
const (
	// AcceptText asks for the Prometheus text format only.
	AcceptText = "text/plain;version=0.0.4;q=1.0,*/*;q=0.1"
	// AcceptOpenMetrics prefers OpenMetrics 1.0 and accepts text.
	AcceptOpenMetrics = "application/openmetrics-text;version=1.0.0;q=0.9," +
		"application/openmetrics-text;version=0.0.1;q=0.8,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
)

// FormatOf decides from a response's Content-Type whether the body is
// OpenMetrics (true) or the text format (false), using
// expfmt.ResponseFormat. A missing or unknown text-like type is parsed as
// text with a warning; protobuf, JSON and HTML are errors.
func FormatOf(h http.Header) (openMetrics bool, warning string, err error) {
	f := expfmt.ResponseFormat(h)
	switch f.FormatType() {
	case expfmt.TypeOpenMetrics:
		return true, "", nil
	case expfmt.TypeTextPlain:
		return false, "", nil
	}
	ct := h.Get("Content-Type")
	if ct == "" {
		return false, "no Content-Type header; parsed as text format", nil
	}
	mt, params, perr := mime.ParseMediaType(ct)
	if perr != nil {
		return false, fmt.Sprintf("unparsable Content-Type %s; parsed as text format", quote(ct)), nil
	}
	switch mt {
	case "text/plain":
		return false, "", nil // another text version (e.g. 1.0.0): same syntax for our purposes
	case "application/openmetrics-text":
		return true, fmt.Sprintf("OpenMetrics version %s; parsed as 1.0", sanitize.Text(params["version"])), nil
	case "application/json":
		return false, "", fmt.Errorf("response is JSON, not a Prometheus exposition (trtllm-serve: use path /prometheus/metrics)")
	case "text/html":
		return false, "", fmt.Errorf("response is an HTML page, not a Prometheus exposition")
	case "application/vnd.google.protobuf":
		return false, "", fmt.Errorf("protobuf exposition not supported")
	}
	return false, fmt.Sprintf("unexpected Content-Type %s; parsed as text format", quote(mt)), nil
}
