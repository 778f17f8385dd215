package probe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// nth stops at the n-th observation of a kind.
func nth(n int, kind telemetry.Kind) func(telemetry.Observation) bool {
	var seen atomic.Int32
	return func(o telemetry.Observation) bool {
		return o.Kind == kind && int(seen.Add(1)) == n
	}
}

// runUntil runs a Runner until stop says so (or d passes, a failure
// when stop is set): tests wait for an event, not for a guess of time.
func runUntil(t *testing.T, opts Options, d time.Duration, stop func(telemetry.Observation) bool) []telemetry.Observation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	sink := &collector{}
	var stopped atomic.Bool
	r, err := NewRunner(opts, telemetry.SinkFunc(func(o telemetry.Observation) {
		sink.Observe(o)
		if stop != nil && stop(o) {
			stopped.Store(true)
			cancel()
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if stop != nil && !stopped.Load() {
		t.Fatalf("the awaited observation did not come within %v", d)
	}
	return sink.All()
}

func TestRunnerSuccess(t *testing.T) {
	steps := []step{{Data: sseData(roleChunk)}}
	for i := range 5 {
		steps = append(steps, step{Wait: 10 * time.Millisecond, Data: sseData(chatChunk("w" + itoa(i)))})
	}
	steps = append(steps, step{Data: sseData(finishChunk, usageChunk(5), "[DONE]")})
	srv := server(t, scripted("text/event-stream", steps))
	obs := runUntil(t, Options{URL: srv.URL, Interval: 150 * time.Millisecond}, 20*time.Second, nth(3, telemetry.KindProbe))

	if len(obs) == 0 || obs[0].Kind != telemetry.KindEndpoint {
		t.Fatalf("first observation %+v, want the endpoint", obs)
	}
	ep := obs[0].Info
	host := strings.TrimPrefix(srv.URL, "http://")
	if ep.Name != host+"/m" || ep.Model != "m" || ep.Engine != telemetry.EngineVLLM || ep.BaseURL != srv.URL {
		t.Errorf("endpoint %+v", ep)
	}
	wantSource := "probe:" + srv.URL + "/v1/chat/completions"
	count := map[string]int{}
	for _, o := range obs {
		if o.Source != wantSource || o.Endpoint != ep.Name {
			t.Errorf("observation source %q endpoint %q", o.Source, o.Endpoint)
		}
		// Figures carry the probe interval; the source status none (a
		// stream may outlast any multiple of it: no staleness from silence).
		switch want := 150 * time.Millisecond; {
		case o.Kind == telemetry.KindSource && o.Interval != 0:
			t.Errorf("status with interval %v, want none", o.Interval)
		case o.Kind != telemetry.KindEndpoint && o.Kind != telemetry.KindSource && o.Interval != want:
			t.Errorf("%s interval %v", o.Kind, o.Interval)
		}
		count[string(o.Kind)+"/"+string(o.Signal)]++
		switch {
		case o.Kind == telemetry.KindSample && o.Signal == telemetry.TTFT:
			if o.Value < 0.005 || o.Value > 1 || o.Approx {
				t.Errorf("TTFT sample %+v", o)
			}
		case o.Kind == telemetry.KindSample && o.Signal == telemetry.ProbeSuccess && o.Value != 1:
			t.Errorf("probe_success %v", o.Value)
		case o.Kind == telemetry.KindProbe:
			if !o.Probe.OK || o.Probe.OutputTokens != 5 || len(o.Probe.ITLms) != 4 || o.Probe.TokensSource != "usage" {
				t.Errorf("probe record %+v", o.Probe)
			}
		case o.Kind == telemetry.KindSource:
			if o.Status.Kind != "probe" || (o.Status.State != telemetry.Live && o.Status.State != telemetry.Unknown) {
				t.Errorf("status %+v", o.Status)
			}
		}
	}
	probes := count["probe/"]
	if probes != 3 {
		t.Fatalf("%d probes: %v", probes, count)
	}
	for _, sig := range []telemetry.Signal{telemetry.TTFT, telemetry.TPOT, telemetry.E2E, telemetry.OutputTPS, telemetry.ProbeSuccess} {
		if count["sample/"+string(sig)] != probes {
			t.Errorf("%d %s samples for %d probes", count["sample/"+string(sig)], sig, probes)
		}
	}
	if count["sample/itl"] != 4*probes || count["failure/"] != 0 || count["live_text/"] < probes {
		t.Errorf("counts %v", count)
	}
}

// TestRunnerFailure: failures are ProbeSuccess 0 plus a KindFailure with
// the category; no latency sample.
func TestRunnerFailure(t *testing.T) {
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "engine dead", http.StatusInternalServerError)
	}))
	obs := runUntil(t, Options{URL: srv.URL, Interval: 100 * time.Millisecond}, 20*time.Second, nth(3, telemetry.KindSource))
	var failures, zeros, latencies int
	var last *telemetry.SourceStatus
	for _, o := range obs {
		switch {
		case o.Kind == telemetry.KindFailure:
			failures++
			if o.Signal != "" || !strings.HasPrefix(o.Err, "http_status: HTTP 500: engine dead") {
				t.Errorf("failure %+v", o)
			}
		case o.Kind == telemetry.KindSample && o.Signal == telemetry.ProbeSuccess:
			if o.Value == 0 {
				zeros++
			}
		case o.Kind == telemetry.KindSample:
			latencies++
		case o.Kind == telemetry.KindSource:
			last = o.Status
		}
	}
	if failures < 2 || zeros != failures || latencies != 0 {
		t.Errorf("failures %d zeros %d latency samples %d", failures, zeros, latencies)
	}
	if last == nil || last.State != telemetry.Error || last.Failures < 2 || !strings.Contains(last.Err, "http_status") {
		t.Errorf("last status %+v", last)
	}
}

// TestRunnerUnreachable: discovery failures are reported, and retried.
func TestRunnerUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	obs := runUntil(t, Options{URL: url, Interval: 100 * time.Millisecond}, 20*time.Second, nth(2, telemetry.KindSource))
	errs := 0
	for _, o := range obs {
		if o.Kind == telemetry.KindSource && o.Status.State == telemetry.Error {
			errs++
		}
	}
	if errs < 2 {
		t.Errorf("%d error statuses for an unreachable server: %+v", errs, obs)
	}
}

// TestRunnerNeutralisesEscapes: escapes and bidi overrides in model ids
// and streamed text reach the sink escaped, never raw.
func TestRunnerNeutralisesEscapes(t *testing.T) {
	evil := "llama\x1b]0;pwned\x07-8b\x1b[2J\rFAKE\u202eevil"
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"data":[{"id":` + quote(evil) + `,"owned_by":"vllm"}]}`))
	})
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		chunk := `{"model":` + quote(evil) + `,"choices":[{"index":0,"delta":{"content":` + quote("hi "+evil+"\nline2") + `}}]}`
		scripted("text/event-stream", []step{{Data: sseData(chunk, chatChunk("x"), `{"error":{"message":`+quote("bad "+evil)+`}}`)}})(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	obs := runUntil(t, Options{URL: srv.URL, Interval: time.Second}, 20*time.Second, nth(1, telemetry.KindProbe))
	var texts []string
	for _, o := range obs {
		if o.Info != nil {
			texts = append(texts, o.Info.Name, o.Info.Model)
		}
		if o.Live != nil {
			texts = append(texts, o.Live.Text)
			if !strings.Contains(o.Live.Text, "\nline2") {
				t.Errorf("live text lost its newline: %q", o.Live.Text)
			}
		}
		texts = append(texts, o.Err)
		if o.Probe != nil {
			texts = append(texts, o.Probe.Error)
		}
		if o.Status != nil {
			texts = append(texts, o.Status.Err, o.Status.Name)
		}
	}
	joined := strings.Join(texts, "|")
	for _, bad := range []string{"\x1b", "\x07", "\r", "\u202e"} {
		if strings.Contains(joined, bad) {
			t.Errorf("raw %q reached the sink: %q", bad, joined)
		}
	}
	for _, want := range []string{`\x1b]0;pwned`, `\u202eevil`, `\x0dFAKE`} {
		if !strings.Contains(joined, want) {
			t.Errorf("escaped form %q missing: %q", want, joined)
		}
	}
}

// TestLiveTextThrottled: at most ~10 updates a second, and a final one.
func TestLiveTextThrottled(t *testing.T) {
	var steps []step
	for i := range 100 {
		steps = append(steps, step{Wait: 5 * time.Millisecond, Data: sseData(chatChunk("t" + itoa(i) + " "))})
	}
	steps = append(steps, step{Data: sseData(finishChunk, usageChunk(100), "[DONE]")})
	srv := server(t, scripted("text/event-stream", steps))
	obs := runUntil(t, Options{URL: srv.URL, Interval: time.Minute, Jitter: 0.001}, 20*time.Second,
		func(o telemetry.Observation) bool { return o.Live != nil && o.Live.Done })
	var live []*telemetry.LiveText
	var at []time.Time
	for _, o := range obs {
		if o.Live != nil {
			live = append(live, o.Live)
			at = append(at, o.At)
		}
	}
	if len(live) < 2 || !live[len(live)-1].Done || live[len(live)-1].Tokens != 100 {
		t.Fatalf("live updates %d, last %+v", len(live), live[len(live)-1])
	}
	span := at[len(at)-1].Sub(at[0])
	if limit := int(span/liveTextInterval) + 2; len(live) > limit {
		t.Errorf("%d live updates in %v (limit %d)", len(live), span, limit)
	}
	if last := live[len(live)-1]; last.TPS <= 0 || !strings.HasSuffix(last.Text, "t99 ") {
		t.Errorf("last live %+v", last)
	}
}

// A probe cut short by shutdown (the exporter or dashboard stopping) is
// not the endpoint's failure: nothing of it is emitted — no failure, no
// probe_success 0, no probe record — so the last figures before a stop
// never count a failed request that did not happen.
func TestRunnerShutdownIsNotAFailure(t *testing.T) {
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(sseData(roleChunk, chatChunk("first"))))
		flush(w)
		<-r.Context().Done() // streams on until the client goes
	}))
	// Stop as the first token shows: the probe is in flight.
	obs := runUntil(t, Options{URL: srv.URL, Interval: time.Minute}, 20*time.Second, func(o telemetry.Observation) bool {
		return o.Kind == telemetry.KindLiveText
	})
	for _, o := range obs {
		if o.Kind == telemetry.KindFailure || o.Kind == telemetry.KindProbe ||
			o.Kind == telemetry.KindSample && o.Signal == telemetry.ProbeSuccess {
			t.Errorf("emitted for a probe cut by shutdown: %+v", o)
		}
		if o.Kind == telemetry.KindSource && o.Status.State == telemetry.Error {
			t.Errorf("source failing after shutdown: %+v", o.Status)
		}
	}
}
