package exporter

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

const src = "probe:http://127.0.0.1:8000/v1/chat/completions"

// fakeClock is a settable clock for /healthz.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func probeObs(ep string, at time.Time, p telemetry.ProbeRecord) telemetry.Observation {
	return telemetry.Observation{Kind: telemetry.KindProbe, At: at, Endpoint: ep, Source: src, Interval: 5 * time.Second, Probe: &p}
}

func okProbe(ttftMs, tpotMs, e2eMs float64, tokens int, itl ...float64) telemetry.ProbeRecord {
	return telemetry.ProbeRecord{OK: true, TTFTms: ttftMs, TPOTms: tpotMs, E2Ems: e2eMs, OutputTokens: tokens, ITLms: itl}
}

// scrape fetches /metrics as the classic text format and parses it with
// expfmt, as a Prometheus-format consumer would.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// find returns the metric of family name whose labels include want.
func find(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

func mustFind(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	t.Helper()
	m := find(fams, name, want)
	if m == nil {
		t.Fatalf("no %s%v in scrape", name, want)
	}
	return m
}

// buckets returns le → cumulative count, le parsed as a float (never
// compared as a string: "1" and "1.0" are the same bound).
func buckets(m *dto.Metric) map[float64]uint64 {
	out := map[float64]uint64{}
	for _, b := range m.GetHistogram().GetBucket() {
		out[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	return out
}

func TestProbeMetrics(t *testing.T) {
	e := New(Options{})
	at := time.Unix(1_700_000_000, 0)
	e.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: at, Endpoint: "ep1", Source: src,
		Info: &telemetry.Endpoint{Name: "ep1", Model: "llama-3-8b"}})
	e.Observe(probeObs("ep1", at, okProbe(30, 20, 300, 10, 10, 20, 30))) // TTFT 0.03 → le 0.04
	e.Observe(probeObs("ep1", at, okProbe(250, 60, 800, 5, 60)))         // TTFT exactly 0.25: le is inclusive
	e.Observe(probeObs("ep1", at, okProbe(6000, 0, 6000, 1)))            // one token: no TPOT
	e.Observe(probeObs("ep1", at.Add(time.Second), telemetry.ProbeRecord{OK: false, ErrorKind: "timeout"}))
	e.Observe(probeObs("ep1", at.Add(2*time.Second), telemetry.ProbeRecord{OK: false, ErrorKind: "http_5xx"}))
	e.Observe(probeObs("ep1", at.Add(3*time.Second), telemetry.ProbeRecord{OK: false, ErrorKind: "timeout"}))
	// Ignored: samples (the same requests again), other sources' records,
	// live text.
	e.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: at, Endpoint: "ep1", Source: src, Signal: telemetry.TTFT, Value: 0.03})
	p := okProbe(1, 1, 1, 1)
	e.Observe(telemetry.Observation{Kind: telemetry.KindProbe, At: at, Endpoint: "ep1", Source: "promql:http://prom", Probe: &p})
	e.Observe(telemetry.Observation{Kind: telemetry.KindLiveText, At: at, Endpoint: "ep1", Source: src, Live: &telemetry.LiveText{Text: "x"}})

	fams := scrape(t, e.Handler())
	lbl := map[string]string{"endpoint": "ep1", "model": "llama-3-8b"}

	ttft := mustFind(t, fams, "ttftop_probe_ttft_seconds", lbl)
	if h := ttft.GetHistogram(); h.GetSampleCount() != 3 || math.Abs(h.GetSampleSum()-6.28) > 1e-9 {
		t.Errorf("ttft count/sum = %d/%g, want 3/6.28", h.GetSampleCount(), h.GetSampleSum())
	}
	b := buckets(ttft)
	for le, want := range map[float64]uint64{0.02: 0, 0.04: 1, 0.1: 1, 0.25: 2, 5.0: 2, 7.5: 3, 2560: 3} {
		if b[le] != want {
			t.Errorf("ttft le=%g: %d, want %d", le, b[le], want)
		}
	}
	if len(b) != len(TTFTBuckets())+1 || b[math.Inf(1)] != 3 {
		t.Errorf("ttft has %d buckets (+Inf %d), want vLLM's %d and +Inf", len(b), b[math.Inf(1)], len(TTFTBuckets()))
	}
	for _, le := range TTFTBuckets() {
		if _, ok := b[le]; !ok {
			t.Errorf("ttft lacks vLLM bound le=%g", le)
		}
	}
	tpot := mustFind(t, fams, "ttftop_probe_tpot_seconds", lbl)
	if n := tpot.GetHistogram().GetSampleCount(); n != 2 {
		t.Errorf("tpot count = %d, want 2 (no TPOT for a one-token reply)", n)
	}
	if b := buckets(tpot); b[0.05] != 1 || b[0.075] != 2 || len(b) != len(ITLBuckets())+1 {
		t.Errorf("tpot buckets = %v", b)
	}
	itl := mustFind(t, fams, "ttftop_probe_itl_seconds", lbl)
	if b := buckets(itl); itl.GetHistogram().GetSampleCount() != 4 || b[0.01] != 1 || b[0.025] != 2 || b[0.05] != 3 || b[0.075] != 4 {
		t.Errorf("itl count %d buckets %v", itl.GetHistogram().GetSampleCount(), b)
	}
	e2e := mustFind(t, fams, "ttftop_probe_e2e_seconds", lbl)
	if b := buckets(e2e); e2e.GetHistogram().GetSampleCount() != 3 || b[0.3] != 1 || b[0.8] != 2 || b[5.0] != 2 || b[10] != 3 || len(b) != len(E2EBuckets())+1 {
		t.Errorf("e2e count %d buckets %v", e2e.GetHistogram().GetSampleCount(), b)
	}

	// TTFA: observed for the requests that answered (okProbe leaves it
	// out: none here), see TestTTFAHistogram.
	if n := mustFind(t, fams, "ttftop_probe_ttfa_seconds", lbl).GetHistogram().GetSampleCount(); n != 0 {
		t.Errorf("ttfa count = %d for records without a TTFA", n)
	}

	counts := map[[2]string]float64{}
	for _, m := range fams["ttftop_probe_requests_total"].GetMetric() {
		var k [2]string
		for _, l := range m.Label {
			switch l.GetName() {
			case "result":
				k[0] = l.GetValue()
			case "error_kind":
				k[1] = l.GetValue()
			}
		}
		counts[k] = m.GetCounter().GetValue()
	}
	want := map[[2]string]float64{{"success", ""}: 3, {"failure", "timeout"}: 2, {"failure", "http_5xx"}: 1}
	if len(counts) != len(want) {
		t.Errorf("requests_total series = %v, want %v", counts, want)
	}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("requests_total%v = %g, want %g", k, counts[k], v)
		}
	}
	if v := mustFind(t, fams, "ttftop_probe_output_tokens_total", lbl).GetCounter().GetValue(); v != 16 {
		t.Errorf("output tokens = %g, want 16", v)
	}
	if v := mustFind(t, fams, "ttftop_probe_success", lbl).GetGauge().GetValue(); v != 0 {
		t.Errorf("success = %g, want 0 after a failure", v)
	}
	if v := mustFind(t, fams, "ttftop_probe_last_result_timestamp_seconds", lbl).GetGauge().GetValue(); v != float64(at.Unix()+3) {
		t.Errorf("last result timestamp = %g", v)
	}
	for name := range fams {
		if strings.HasPrefix(name, "ttftop_probe_") && find(fams, name, map[string]string{"model": ""}) != nil {
			t.Errorf("%s has a series without the model label", name)
		}
	}
	// The private registry still carries the process's own metrics, and
	// nothing from the global default registry is needed for that.
	if fams["process_cpu_seconds_total"] == nil || fams["go_goroutines"] == nil {
		t.Errorf("missing process/go collectors")
	}
}

func TestModelLearntLater(t *testing.T) {
	e := New(Options{})
	at := time.Unix(1_700_000_000, 0)
	e.Observe(probeObs("ep", at, okProbe(100, 10, 200, 3)))
	fams := scrape(t, e.Handler())
	mustFind(t, fams, "ttftop_probe_ttft_seconds", map[string]string{"endpoint": "ep", "model": ""})
	e.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: at, Endpoint: "ep", Source: "scrape:http://x",
		Info: &telemetry.Endpoint{Name: "ep", Model: "m"}})
	fams = scrape(t, e.Handler())
	m := mustFind(t, fams, "ttftop_probe_ttft_seconds", map[string]string{"endpoint": "ep", "model": "m"})
	if m.GetHistogram().GetSampleCount() != 1 || len(fams["ttftop_probe_ttft_seconds"].Metric) != 1 {
		t.Errorf("after the model is known the one series carries it: %v", fams["ttftop_probe_ttft_seconds"])
	}
}

func TestOpenMetrics(t *testing.T) {
	e := New(Options{})
	e.Observe(probeObs("ep", time.Now(), okProbe(100, 10, 200, 3)))
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, req)
	body := rec.Body.String()
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Fatalf("content-type %q", ct)
	}
	if !strings.HasSuffix(body, "# EOF\n") || !strings.Contains(body, "ttftop_probe_requests_total{") ||
		!strings.Contains(body, "# TYPE ttftop_probe_requests counter") {
		t.Errorf("not OpenMetrics:\n%s", body)
	}
}

func TestCardinalityCap(t *testing.T) {
	e := New(Options{MaxEndpoints: 3, MaxErrorKinds: 2})
	at := time.Unix(1_700_000_000, 0)
	for i, ep := range []string{"a", "b", "c", "d", "e", "a"} {
		e.Observe(probeObs(ep, at.Add(time.Duration(i)*time.Second), okProbe(100, 10, 200, 3)))
	}
	for _, kind := range []string{"timeout", "http_5xx", "tls", "dns", "timeout"} {
		e.Observe(probeObs("a", at, telemetry.ProbeRecord{OK: false, ErrorKind: kind}))
	}
	// Invalid UTF-8 and overlong names must not break the scrape.
	e2 := New(Options{})
	e2.Observe(probeObs("bad\xff"+strings.Repeat("x", 1000), at, okProbe(100, 10, 200, 3)))
	if f := scrape(t, e2.Handler())["ttftop_probe_ttft_seconds"]; f == nil || len(f.Metric) != 1 {
		t.Errorf("invalid UTF-8 endpoint not exported")
	}

	fams := scrape(t, e.Handler())
	if n := len(fams["ttftop_probe_ttft_seconds"].GetMetric()); n != 3 {
		t.Errorf("%d endpoints exported, want the cap 3", n)
	}
	if m := find(fams, "ttftop_probe_ttft_seconds", map[string]string{"endpoint": "d"}); m != nil {
		t.Errorf("endpoint past the cap exported")
	}
	if v := mustFind(t, fams, "ttftop_exporter_dropped_observations_total", map[string]string{"reason": "endpoint_limit"}).GetCounter().GetValue(); v != 2 {
		t.Errorf("dropped = %g, want 2", v)
	}
	kinds := map[string]float64{}
	for _, m := range fams["ttftop_probe_requests_total"].GetMetric() {
		for _, l := range m.Label {
			if l.GetName() == "error_kind" && l.GetValue() != "" {
				kinds[l.GetValue()] += m.GetCounter().GetValue()
			}
		}
	}
	if len(kinds) != 3 || kinds["timeout"] != 2 || kinds["http_5xx"] != 1 || kinds[OtherErrorKind] != 2 {
		t.Errorf("error kinds = %v, want timeout:2 http_5xx:1 other:2", kinds)
	}
}

func TestHealthz(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	e := New(Options{Now: clk.Now})
	h := e.Handler()
	get := func() (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		body, err := io.ReadAll(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		return rec.Code, string(body)
	}
	expect := func(code int, substr string) {
		t.Helper()
		c, body := get()
		if c != code || !strings.Contains(body, substr) {
			t.Errorf("healthz = %d %q, want %d containing %q", c, body, code, substr)
		}
	}
	expect(200, "starting")
	// The grace: 3 × the default interval, a probe's and a model
	// listing's request timeouts (a hung target holds both).
	grace := 3*DefaultProbeInterval + 2*DefaultProbeTimeout
	clk.Add(grace)
	expect(200, "starting")
	clk.Add(time.Second)
	expect(503, fmt.Sprintf("no probe result since start %s ago (grace 2m30s = limit 1m30s = 3 × 10s probe interval + 1m0s request timeout, + 1m0s request timeout of a model listing)", (grace+time.Second).String()))
	// A probe result with a 5 s interval: the limit becomes 15 s plus the
	// request timeout a probe of a hung target runs into.
	e.Observe(probeObs("ep", clk.Now(), telemetry.ProbeRecord{OK: false, ErrorKind: "timeout"}))
	expect(200, "ok") // a failed probe is still a probe result
	clk.Add(15*time.Second + DefaultProbeTimeout)
	expect(200, "ok: last probe result 1m15s ago (limit 1m15s = 3 × 5s probe interval + 1m0s request timeout)")
	clk.Add(time.Second)
	expect(503, "no probe result for 1m16s (limit 1m15s = 3 × 5s probe interval + 1m0s request timeout)")

	// The probes' own timeout, when given, makes the limit.
	e3 := New(Options{Now: clk.Now, ProbeTimeout: 2 * time.Second})
	e3.Observe(probeObs("ep", clk.Now(), telemetry.ProbeRecord{OK: false, ErrorKind: "stall"}))
	clk.Add(18 * time.Second)
	if ok, reason := e3.Health(); ok || !strings.Contains(reason, "limit 17s = 3 × 5s probe interval + 2s request timeout") {
		t.Errorf("health at 18s with a 2s probe timeout = %v %q, want unhealthy past the 17s limit", ok, reason)
	}

	// An explicit interval wins over the observations'.
	e2 := New(Options{Now: clk.Now, ProbeInterval: time.Minute})
	e2.Observe(probeObs("ep", clk.Now(), okProbe(1, 1, 1, 1)))
	clk.Add(2 * time.Minute)
	if ok, reason := e2.Health(); !ok {
		t.Errorf("unhealthy within 3 × 1m: %s", reason)
	}
}

func TestAnnouncedAtZero(t *testing.T) {
	e := New(Options{})
	at := time.Unix(1_700_000_000, 0)
	e.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: at, Endpoint: "ep", Source: src,
		Info: &telemetry.Endpoint{Name: "ep", Model: "m"}})
	// An endpoint announced by another source only names its model.
	e.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: at, Endpoint: "scraped", Source: "scrape:http://x/metrics",
		Info: &telemetry.Endpoint{Name: "scraped", Model: "m2"}})
	fams := scrape(t, e.Handler())
	lbl := map[string]string{"endpoint": "ep", "model": "m"}
	for _, name := range []string{"ttftop_probe_ttft_seconds", "ttftop_probe_ttfa_seconds", "ttftop_probe_tpot_seconds", "ttftop_probe_itl_seconds", "ttftop_probe_e2e_seconds"} {
		if m := mustFind(t, fams, name, lbl); m.GetHistogram().GetSampleCount() != 0 {
			t.Errorf("%s count %d before any probe", name, m.GetHistogram().GetSampleCount())
		}
	}
	if v := mustFind(t, fams, "ttftop_probe_requests_total", map[string]string{"result": "success"}).GetCounter().GetValue(); v != 0 {
		t.Errorf("requests before any probe = %g", v)
	}
	if fams["ttftop_probe_success"] != nil || fams["ttftop_probe_last_result_timestamp_seconds"] != nil {
		t.Errorf("success/last-result exported before any result (unknown must be absent, not 0)")
	}
	if find(fams, "ttftop_probe_ttft_seconds", map[string]string{"endpoint": "scraped"}) != nil {
		t.Errorf("endpoint only announced by a scrape source is exported")
	}
}

// The SLO engine is what Options.Alerts is for.
var _ AlertSource = (*slo.Engine)(nil)

// TestTTFAHistogram: a reasoning probe's time to first answer lands in
// ttftop_probe_ttfa_seconds with vLLM's TTFT bounds; a record without an
// answer (reasoning cut by max_tokens) is not observed.
func TestTTFAHistogram(t *testing.T) {
	e := New(Options{})
	at := time.Unix(1_700_000_000, 0)
	r := okProbe(30, 10, 900, 50)
	r.TTFAms = 600 // 0.6 s: le 0.75
	e.Observe(probeObs("ep", at, r))
	e.Observe(probeObs("ep", at, okProbe(40, 10, 500, 50))) // only reasoned: no TTFA
	fams := scrape(t, e.Handler())
	m := mustFind(t, fams, "ttftop_probe_ttfa_seconds", map[string]string{"endpoint": "ep"})
	b := buckets(m)
	if h := m.GetHistogram(); h.GetSampleCount() != 1 || math.Abs(h.GetSampleSum()-0.6) > 1e-9 || b[0.5] != 0 || b[0.75] != 1 {
		t.Errorf("ttfa count %d sum %g buckets %v, want one 0.6 s sample", h.GetSampleCount(), h.GetSampleSum(), b)
	}
	if n := mustFind(t, fams, "ttftop_probe_ttft_seconds", map[string]string{"endpoint": "ep"}).GetHistogram().GetSampleCount(); n != 2 {
		t.Errorf("ttft count %d, want 2", n)
	}
}

// TestGoodRequests: probes judged good count in good_requests_total; an
// endpoint whose probes nobody judges has no such series (not 0).
func TestGoodRequests(t *testing.T) {
	e := New(Options{})
	at := time.Unix(1_700_000_000, 0)
	for i, good := range []float64{1, 0, 1, 1} {
		e.Observe(probeObs("judged", at, okProbe(30, 10, 900, 50)))
		e.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: at, Endpoint: "judged", Source: src,
			Signal: telemetry.Goodput, Value: good})
		e.Observe(probeObs("free", at.Add(time.Duration(i)*time.Second), okProbe(30, 10, 900, 50)))
	}
	fams := scrape(t, e.Handler())
	if v := mustFind(t, fams, "ttftop_probe_good_requests_total", map[string]string{"endpoint": "judged"}).GetCounter().GetValue(); v != 3 {
		t.Errorf("good requests %g, want 3", v)
	}
	if m := find(fams, "ttftop_probe_good_requests_total", map[string]string{"endpoint": "free"}); m != nil {
		t.Errorf("unjudged endpoint has good_requests_total: %v", m)
	}
}
