package promql

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// fastAPI runs instant and range queries itself. client_golang validates
// a body with encoding/json and then decodes it again with json-iterator
// through reflection (an instant vector sample by sample, each through
// encoding/json once more); at fleet scale (a 1 h backfill of 1,000
// endpoints is a million points, each refresh's gauges 1,000 samples a
// query) that was most of ttftop's CPU. Errors are built as
// client_golang builds them (describeError reads both alike); a status
// client_golang answers by retrying with GET, or a success body in a
// shape not read here (a scalar, native histograms), is asked again
// through client_golang.
type fastAPI struct {
	promAPI
	hc              *http.Client
	instant, ranged *url.URL // …/api/v1/query, …/api/v1/query_range
	timeout         time.Duration
}

func newFastAPI(inner promAPI, hc *http.Client, base *url.URL, timeout time.Duration) fastAPI {
	at := func(p string) *url.URL {
		u := *base
		u.Path = path.Join(u.Path, p)
		return &u
	}
	return fastAPI{promAPI: inner, hc: hc, instant: at("/api/v1/query"), ranged: at("/api/v1/query_range"), timeout: timeout}
}

// errUnexpected sends an answer to client_golang.
var errUnexpected = errors.New("unexpected answer")

// Query runs an instant query itself, else through client_golang.
func (f fastAPI) Query(ctx context.Context, query string, ts time.Time, opts ...v1.Option) (model.Value, v1.Warnings, v1.Infos, error) {
	form := url.Values{"query": {query}}
	if !ts.IsZero() {
		form.Set("time", formatTime(ts))
	}
	body, err := f.post(ctx, f.instant, form)
	var (
		vec model.Vector
		w   v1.Warnings
		inf v1.Infos
	)
	if err == nil {
		vec, w, inf, err = decodeInstantAnswer(body)
	}
	if errors.Is(err, errUnexpected) && ctx.Err() == nil {
		return f.promAPI.Query(ctx, query, ts, opts...)
	}
	if err != nil {
		return nil, w, inf, err
	}
	return vec, w, inf, nil
}

// QueryRange runs a range query itself, else through client_golang.
func (f fastAPI) QueryRange(ctx context.Context, query string, r v1.Range, opts ...v1.Option) (model.Value, v1.Warnings, v1.Infos, error) {
	form := url.Values{
		"query": {query},
		"start": {formatTime(r.Start)},
		"end":   {formatTime(r.End)},
		"step":  {strconv.FormatFloat(r.Step.Seconds(), 'f', -1, 64)},
	}
	body, err := f.post(ctx, f.ranged, form)
	var (
		mat model.Matrix
		w   v1.Warnings
		inf v1.Infos
	)
	if err == nil {
		mat, w, inf, err = decodeRangeAnswer(body, int(r.End.Sub(r.Start)/max(r.Step, 1))+1)
	}
	if errors.Is(err, errUnexpected) && ctx.Err() == nil {
		return f.promAPI.QueryRange(ctx, query, r, opts...)
	}
	if err != nil {
		return nil, w, inf, err
	}
	return mat, w, inf, nil
}

// post sends the form as client_golang does and returns a 2xx body.
func (f fastAPI) post(ctx context.Context, endpoint *url.URL, form url.Values) ([]byte, error) {
	if f.timeout > 0 {
		form.Set("timeout", f.timeout.String()) // as client_golang sends it
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := f.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusForbidden, http.StatusMethodNotAllowed, http.StatusNotImplemented, http.StatusNoContent:
		_, _ = io.Copy(io.Discard, resp.Body) // drained for reuse; client_golang retries with GET
		return nil, errUnexpected
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, httpError(resp.StatusCode, body)
	}
	return body, nil
}

// httpError is the error client_golang gives for a status that is not
// 2xx, so that describeError reads both alike: the API's own error for
// 400 and 422, else the status with the body as detail.
func httpError(code int, body []byte) error {
	if code != http.StatusBadRequest && code != http.StatusUnprocessableEntity {
		typ, msg := v1.ErrBadResponse, fmt.Sprintf("bad response code %d", code)
		switch code / 100 {
		case 4:
			typ, msg = v1.ErrClient, fmt.Sprintf("client error: %d", code)
		case 5:
			typ, msg = v1.ErrServer, fmt.Sprintf("server error: %d", code)
		}
		return &v1.Error{Type: typ, Msg: msg, Detail: string(body)}
	}
	var res struct {
		Status    string       `json:"status"`
		ErrorType v1.ErrorType `json:"errorType"`
		Error     string       `json:"error"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return &v1.Error{Type: v1.ErrClient, Msg: fmt.Sprintf("client error: %d", code), Detail: string(body)}
	}
	if res.Status == "success" {
		return &v1.Error{Type: v1.ErrBadResponse, Msg: "inconsistent body for response code"}
	}
	if res.ErrorType == "" {
		res.ErrorType = v1.ErrClient
	}
	if res.Error == "" {
		res.Error = fmt.Sprintf("client error: %d", code)
	}
	return &v1.Error{Type: res.ErrorType, Msg: res.Error}
}

func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.Unix())+float64(t.Nanosecond())/1e9, 'f', -1, 64)
}

// decodeRangeAnswer reads {"status":"success","data":{"resultType":
// "matrix","result":[…]},"warnings":[…],"infos":[…]}; steps is how many
// points a series may have.
func decodeRangeAnswer(b []byte, steps int) (model.Matrix, v1.Warnings, v1.Infos, error) {
	d := &jsonReader{b: b, steps: min(max(steps, 1), maxPointsPerSeries)}
	var mat model.Matrix
	w, inf, err := d.answer(func() error {
		var err error
		mat, err = d.matrixData()
		return err
	})
	return mat, w, inf, err
}

// decodeInstantAnswer reads {"status":"success","data":{"resultType":
// "vector","result":[…]},"warnings":[…],"infos":[…]}.
func decodeInstantAnswer(b []byte) (model.Vector, v1.Warnings, v1.Infos, error) {
	d := &jsonReader{b: b}
	var vec model.Vector
	w, inf, err := d.answer(func() error {
		var err error
		vec, err = d.vectorData()
		return err
	})
	return vec, w, inf, err
}

// answer reads a success envelope, its data with data.
func (d *jsonReader) answer(data func() error) (v1.Warnings, v1.Infos, error) {
	var (
		warnings []string
		infos    []string
		status   string
		gotData  bool
	)
	err := d.object(func(key string) error {
		var err error
		switch key {
		case "status":
			status, err = d.str()
		case "data":
			gotData = true
			err = data()
		case "warnings":
			warnings, err = d.strings()
		case "infos":
			infos, err = d.strings()
		default:
			err = d.skip()
		}
		return err
	})
	if err != nil || status != "success" || !gotData {
		return nil, nil, errUnexpected
	}
	return warnings, infos, nil
}

// jsonReader is a minimal JSON reader for the shapes above.
type jsonReader struct {
	b     []byte
	i     int
	steps int // points per series to allocate for
	// strs holds the strings read so far: an answer repeats few label
	// names and values (a model's name in each of its 25 bucket series,
	// each le in every model's), so each is allocated once.
	strs map[string]string
}

// maxInterned bounds strs (a fleet's distinct label values are far fewer).
const maxInterned = 1 << 14

// interned returns b as a string, allocated once per answer.
func (d *jsonReader) interned(b []byte) string {
	if s, ok := d.strs[string(b)]; ok { // the lookup does not allocate
		return s
	}
	s := string(b)
	if d.strs == nil {
		d.strs = map[string]string{}
	}
	if len(d.strs) < maxInterned {
		d.strs[s] = s
	}
	return s
}

func (d *jsonReader) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *jsonReader) peek() byte {
	d.ws()
	if d.i >= len(d.b) {
		return 0
	}
	return d.b[d.i]
}

func (d *jsonReader) want(c byte) error {
	if d.peek() != c {
		return errUnexpected
	}
	d.i++
	return nil
}

// object calls field for each key, with the reader at its value.
func (d *jsonReader) object(field func(key string) error) error {
	if err := d.want('{'); err != nil {
		return err
	}
	if d.peek() == '}' {
		d.i++
		return nil
	}
	for {
		k, err := d.str()
		if err != nil {
			return err
		}
		if err := d.want(':'); err != nil {
			return err
		}
		if err := field(k); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return errUnexpected
		}
	}
}

// array calls elem for each element.
func (d *jsonReader) array(elem func() error) error {
	if err := d.want('['); err != nil {
		return err
	}
	if d.peek() == ']' {
		d.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return nil
		default:
			return errUnexpected
		}
	}
}

// str reads a string; escapes are decoded by encoding/json.
func (d *jsonReader) str() (string, error) {
	if d.peek() != '"' {
		return "", errUnexpected
	}
	start := d.i
	d.i++
	escaped := false
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case '\\':
			escaped = true
			d.i += 2
			continue
		case '"':
			d.i++
			if !escaped {
				return d.interned(d.b[start+1 : d.i-1]), nil
			}
			var s string
			if err := json.Unmarshal(d.b[start:d.i], &s); err != nil {
				return "", errUnexpected
			}
			return s, nil
		}
		d.i++
	}
	return "", errUnexpected
}

func (d *jsonReader) strings() ([]string, error) {
	var out []string
	err := d.array(func() error {
		s, err := d.str()
		out = append(out, s)
		return err
	})
	return out, err
}

// number reads a JSON number.
func (d *jsonReader) number() (float64, error) {
	d.ws()
	start := d.i
	for d.i < len(d.b) && numberByte(d.b[d.i]) {
		d.i++
	}
	return parseNumber(d.b[start:d.i])
}

func numberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'
}

// parseNumber parses plain decimals ("1700000000.123", "42") directly,
// anything else (exponents, NaN, Inf) with strconv.
func parseNumber(b []byte) (float64, error) {
	if len(b) > 0 && len(b) <= 18 {
		var whole, frac, scale uint64 = 0, 0, 1
		dot := false
		ok := true
		for _, c := range b {
			switch {
			case c >= '0' && c <= '9' && !dot:
				whole = whole*10 + uint64(c-'0')
			case c >= '0' && c <= '9':
				frac = frac*10 + uint64(c-'0')
				scale *= 10
			case c == '.' && !dot:
				dot = true
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok && b[0] != '.' && b[len(b)-1] != '.' {
			return float64(whole) + float64(frac)/float64(scale), nil
		}
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, errUnexpected
	}
	return v, nil
}

// rawStr returns the bytes of a string without escapes (numbers as
// strings); ok is false when it has escapes or is not a string.
func (d *jsonReader) rawStr() ([]byte, bool) {
	if d.peek() != '"' {
		return nil, false
	}
	end := bytes.IndexByte(d.b[d.i+1:], '"')
	if end < 0 {
		return nil, false
	}
	raw := d.b[d.i+1 : d.i+1+end]
	if bytes.IndexByte(raw, '\\') >= 0 {
		return nil, false
	}
	d.i += end + 2
	return raw, true
}

// skip passes over any value.
func (d *jsonReader) skip() error {
	switch d.peek() {
	case '{':
		return d.object(func(string) error { return d.skip() })
	case '[':
		return d.array(d.skip)
	case '"':
		_, err := d.str()
		return err
	case 0:
		return errUnexpected
	}
	for d.i < len(d.b) && bytes.IndexByte([]byte(",}] \t\n\r"), d.b[d.i]) < 0 {
		d.i++ // a number, true, false or null
	}
	return nil
}

// matrixData reads {"resultType":"matrix","result":[…]}, in either
// order (encoders that sort keys put result first).
func (d *jsonReader) matrixData() (model.Matrix, error) {
	mat := model.Matrix{}
	err := d.resultOf("matrix", func() error {
		ss, err := d.sampleStream()
		mat = append(mat, ss)
		return err
	})
	return mat, err
}

// vectorData reads {"resultType":"vector","result":[…]}.
func (d *jsonReader) vectorData() (model.Vector, error) {
	vec := model.Vector{}
	err := d.resultOf("vector", func() error {
		smp, err := d.sample()
		vec = append(vec, smp)
		return err
	})
	return vec, err
}

// resultOf reads data of result type want, each element of its result
// with elem.
func (d *jsonReader) resultOf(want string, elem func() error) error {
	var typ string
	err := d.object(func(key string) error {
		var err error
		switch key {
		case "resultType":
			typ, err = d.str()
		case "result":
			err = d.array(elem)
		default:
			err = d.skip()
		}
		if typ != "" && typ != want {
			return errUnexpected // read before result, or after: either way not decoded
		}
		return err
	})
	if err == nil && typ != want {
		err = errUnexpected
	}
	return err
}

// metric reads a label set.
func (d *jsonReader) metric() (model.Metric, error) {
	m := model.Metric{}
	err := d.object(func(name string) error {
		v, err := d.str()
		m[model.LabelName(name)] = model.LabelValue(v)
		return err
	})
	return m, err
}

// pair reads [timestamp, "value"].
func (d *jsonReader) pair() (model.SamplePair, error) {
	if err := d.want('['); err != nil {
		return model.SamplePair{}, err
	}
	ts, err := d.number()
	if err != nil {
		return model.SamplePair{}, err
	}
	if err := d.want(','); err != nil {
		return model.SamplePair{}, err
	}
	raw, ok := d.rawStr()
	if !ok {
		return model.SamplePair{}, errUnexpected
	}
	v, err := parseNumber(raw)
	if err != nil {
		return model.SamplePair{}, err
	}
	return model.SamplePair{Timestamp: model.Time(math.Round(ts * 1000)), Value: model.SampleValue(v)}, d.want(']')
}

func (d *jsonReader) sampleStream() (*model.SampleStream, error) {
	ss := &model.SampleStream{Values: make([]model.SamplePair, 0, d.steps)}
	err := d.object(func(key string) error {
		var err error
		switch key {
		case "metric":
			ss.Metric, err = d.metric()
		case "values":
			err = d.array(func() error {
				sp, err := d.pair()
				ss.Values = append(ss.Values, sp)
				return err
			})
		default:
			err = d.skip() // native histograms: not read by ttftop
		}
		return err
	})
	if ss.Metric == nil {
		ss.Metric = model.Metric{}
	}
	return ss, err
}

// sample reads an instant vector's element; one with a native histogram
// is left to client_golang.
func (d *jsonReader) sample() (*model.Sample, error) {
	smp := &model.Sample{}
	valued := false
	err := d.object(func(key string) error {
		var err error
		switch key {
		case "metric":
			smp.Metric, err = d.metric()
		case "value":
			var sp model.SamplePair
			sp, err = d.pair()
			smp.Timestamp, smp.Value, valued = sp.Timestamp, sp.Value, true
		case "histogram":
			err = errUnexpected
		default:
			err = d.skip()
		}
		return err
	})
	if err == nil && !valued {
		err = errUnexpected
	}
	if smp.Metric == nil {
		smp.Metric = model.Metric{}
	}
	return smp, err
}
