package promql

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

func TestDecodeRangeAnswer(t *testing.T) {
	body := []byte(`{"status":"success","data":{"resultType":"matrix","result":[
		{"metric":{"model_name":"a\"b\u00e9","le":"+Inf"},"values":[[1700000000.123,"12"],[1700000015,"NaN"],[1700000030,"+Inf"]],"histograms":[[1,{"count":"1"}]]},
		{"metric":{},"values":[]}],"stats":{"x":[1,2,{"y":null}]}},"warnings":["w1"],"infos":["i1"],"isPartial":false}`)
	mat, w, inf, err := decodeRangeAnswer(body, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(mat) != 2 || len(w) != 1 || w[0] != "w1" || len(inf) != 1 || inf[0] != "i1" {
		t.Fatalf("got %v, warnings %v, infos %v", mat, w, inf)
	}
	ss := mat[0]
	if ss.Metric["model_name"] != "a\"b\u00e9" || ss.Metric["le"] != "+Inf" {
		t.Errorf("labels %v", ss.Metric)
	}
	if len(ss.Values) != 3 || ss.Values[0].Timestamp != model.Time(1700000000123) || ss.Values[0].Value != 12 ||
		!math.IsNaN(float64(ss.Values[1].Value)) || !math.IsInf(float64(ss.Values[2].Value), 1) {
		t.Errorf("values %v", ss.Values)
	}
	for _, bad := range []string{
		`{"status":"error","errorType":"bad_data","error":"boom"}`,
		`{"status":"success","data":{"resultType":"vector","result":[]}}`,
		`{"status":"success","data":{"result":[{"metric":{},"value":[1,"2"]}],"resultType":"vector"}}`,
		`{"status":"success","data":{"result":[]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,2]]}]}}`,
		`<html>proxy error</html>`,
		`{"status":"success","data":{"resultType":"matrix","result":[`,
	} {
		if _, _, _, err := decodeRangeAnswer([]byte(bad), 1); err == nil {
			t.Errorf("%s: decoded, want it handed to client_golang", bad)
		}
	}
}

// Encoders that sort keys (encoding/json of a map) write result first.
func TestDecodeRangeAnswerSortedKeys(t *testing.T) {
	mat, _, _, err := decodeRangeAnswer([]byte(`{"data":{"result":[{"metric":{"a":"b"},"values":[[1,"2"]]}],"resultType":"matrix"},"status":"success"}`), 1)
	if err != nil || len(mat) != 1 || len(mat[0].Values) != 1 || mat[0].Values[0].Value != 2 {
		t.Fatalf("got %v, %v", mat, err)
	}
}

func TestParseNumber(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
	}{{"0", 0}, {"42", 42}, {"1700000000.123", 1700000000.123}, {"0.25", 0.25}, {"1e3", 1000}, {"-2.5", -2.5}, {"12345678901234567890", 12345678901234567890}} {
		got, err := parseNumber([]byte(c.in))
		if err != nil || math.Abs(got-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
			t.Errorf("parseNumber(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"NaN", "+Inf", "-Inf"} {
		if v, err := parseNumber([]byte(in)); err != nil || !(math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Errorf("parseNumber(%q) = %v, %v", in, v, err)
		}
	}
	for _, in := range []string{"", ".", "1.2.3", "abc", "5."} {
		if v, err := parseNumber([]byte(in)); err == nil && in != "5." {
			t.Errorf("parseNumber(%q) = %v, want an error", in, v)
		}
	}
}

// Failed range and instant queries read the same through fastAPI as through
// client_golang, and are asked once.
func TestFastRangeErrorsAsClientGolang(t *testing.T) {
	for _, c := range []struct {
		code int
		body string
	}{
		{503, `{"status":"error","errorType":"timeout","error":"query timed out"}`},
		{400, `{"status":"error","errorType":"bad_data","error":"parse error at char 3"}`},
		{422, `{"status":"error","errorType":"execution","error":"many-to-many"}`},
		{502, `<html><title>Bad Gateway</title></html>`},
		{400, `not json`},
		{422, `{"status":"success","data":{}}`},
		{401, `unauthorized`},
	} {
		var hits atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.WriteHeader(c.code)
			_, _ = w.Write([]byte(c.body))
		}))
		base, _ := url.Parse(srv.URL)
		inner, err := newAPI(base, srv.Client())
		if err != nil {
			t.Fatal(err)
		}
		fast := newFastAPI(inner, srv.Client(), base, time.Second)
		rng := v1.Range{Start: time.Unix(1000, 0), End: time.Unix(1010, 0), Step: 5 * time.Second}
		_, _, _, want := inner.QueryRange(context.Background(), "up", rng)
		hits.Store(0)
		_, _, _, got := fast.QueryRange(context.Background(), "up", rng)
		if want == nil || got == nil || describeError(got, time.Second, nil) != describeError(want, time.Second, nil) {
			t.Errorf("%d %s: fastAPI says %v, client_golang %v", c.code, c.body, got, want)
		}
		if n := hits.Load(); n != 1 {
			t.Errorf("%d %s: %d requests, want 1", c.code, c.body, n)
		}
		_, _, _, want = inner.Query(context.Background(), "up", time.Time{})
		hits.Store(0)
		_, _, _, got = fast.Query(context.Background(), "up", time.Time{})
		if want == nil || got == nil || describeError(got, time.Second, nil) != describeError(want, time.Second, nil) {
			t.Errorf("%d %s: instant: fastAPI says %v, client_golang %v", c.code, c.body, got, want)
		}
		if n := hits.Load(); n != 1 {
			t.Errorf("%d %s: instant: %d requests, want 1", c.code, c.body, n)
		}
		srv.Close()
	}
}

// Instant answers decode as client_golang decodes them; shapes not read
// here go to client_golang.
func TestFastInstantAsClientGolang(t *testing.T) {
	for _, c := range []struct {
		body string
		fast bool // decoded by fastAPI itself
	}{
		{`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"model_name":"a\"b\u00e9","le":"+Inf"},"value":[1700000000.123,"12"]},{"metric":{},"value":[1700000000.123,"NaN"]},{"value":[1700000000.123,"-Inf"]}]},"warnings":["w1"],"infos":["i1"]}`, true},
		{`{"data":{"result":[{"value":[1700000000,"1e3"],"metric":{"x":"y"}}],"resultType":"vector"},"status":"success"}`, true},
		{`{"status":"success","data":{"resultType":"vector","result":[]}}`, true},
		{`{"status":"success","data":{"resultType":"scalar","result":[1700000000,"2"]}}`, false},
		{`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"histogram":[1,{"count":"1","sum":"2","buckets":[]}]}]}}`, false},
		{`{"status":"error","errorType":"bad_data","error":"boom"}`, false},
	} {
		var hits atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			_, _ = w.Write([]byte(c.body))
		}))
		base, _ := url.Parse(srv.URL)
		inner, err := newAPI(base, srv.Client())
		if err != nil {
			t.Fatal(err)
		}
		fast := newFastAPI(inner, srv.Client(), base, time.Second)
		want, ww, wi, werr := inner.Query(context.Background(), "up", time.Time{})
		hits.Store(0)
		got, gw, gi, gerr := fast.Query(context.Background(), "up", time.Time{})
		if (werr == nil) != (gerr == nil) || fmt.Sprint(want) != fmt.Sprint(got) || fmt.Sprint(ww, wi) != fmt.Sprint(gw, gi) {
			t.Errorf("%s: fastAPI says %v %v %v %v, client_golang %v %v %v %v", c.body, got, gw, gi, gerr, want, ww, wi, werr)
		}
		if n, wantHits := hits.Load(), map[bool]int32{true: 1, false: 2}[c.fast]; n != wantHits {
			t.Errorf("%s: %d requests, want %d", c.body, n, wantHits)
		}
		srv.Close()
	}
}

// BenchmarkDecodeRangeAnswer decodes one history chunk of a 1,000-endpoint
// vLLM fleet: 25 bucket, sum and count series per model, 9 steps.
func BenchmarkDecodeRangeAnswer(b *testing.B) {
	var body strings.Builder
	body.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
	les := []string{"0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08", "0.1", "0.25", "0.5", "0.75", "1", "2.5", "5",
		"7.5", "10", "20", "40", "80", "160", "640", "2560", "+Inf"}
	for i := range 1000 {
		for k, le := range append(les, "sum", "series") {
			if i > 0 || k > 0 {
				body.WriteByte(',')
			}
			fmt.Fprintf(&body, `{"metric":{"model_name":"org/model-%04d","ttftop_engine":"vllm","le":%q},"values":[`, i, le)
			for s := range 9 {
				if s > 0 {
					body.WriteByte(',')
				}
				fmt.Fprintf(&body, `[%d.000,"%d"]`, 1764600000+300*s, 1000*i+s)
			}
			body.WriteString("]}")
		}
	}
	body.WriteString("]}}")
	raw := []byte(body.String())
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := decodeRangeAnswer(raw, 9); err != nil {
			b.Fatal(err)
		}
	}
}
