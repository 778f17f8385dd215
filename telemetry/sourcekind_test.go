package telemetry

import (
	"encoding/json"
	"strings"
	"testing"
)

// Source kinds are wire strings: snapshot JSON, recordings and the
// exporter carry them, so each keeps the string it was written as, and an
// Observation.Source made from a kind parses back to it (a URL's own
// colons included).
func TestSourceKindsKeepTheirStrings(t *testing.T) {
	for k, was := range map[SourceKind]string{SourceProbe: "probe", SourceScrape: "scrape", SourcePromQL: "promql",
		SourceDCGM: "dcgm", SourceSMI: "nvidia-smi", SourceNotify: "notify"} {
		b, err := json.Marshal(SourceStatus{Kind: k})
		if err != nil {
			t.Fatal(err)
		}
		if want := `"kind":"` + was + `"`; !strings.Contains(string(b), want) {
			t.Errorf("%s: JSON %s, want %s", was, b, want)
		}
		if got := SourceKindOf(k.At("http://h:8000/metrics")); got != k {
			t.Errorf("%s: the kind of %q is %q", was, k.At("http://h:8000/metrics"), got)
		}
	}
}
