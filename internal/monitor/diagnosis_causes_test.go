package monitor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// faultAt is when the injected faults begin on the simulator's scenario
// clock, which the test moves there once the baselines are warm.
const faultAt = time.Hour

// causeCase is one injected fault, on the model "sick" of a simulator
// that serves the untouched model "ok" beside it, and the causes it must
// be named by.
type causeCase struct {
	name string
	want []diagnosis.Cause
	// events are the scenario's faults at faultAt (Model is set to sick).
	events []sim.Event
	// spec adjusts sick's model (a KV pool, a draft model, a batching
	// curve); nil keeps diagSpec.
	spec func(*sim.ModelSpec)
	// cfg adjusts the simulator (prefix caching).
	cfg func(*sim.Config)
	// probe adjusts sick's probe (its prompt).
	probe func(*probe.Settings)
	// proxyDelay, when set, puts a delaying HTTP proxy between sick's
	// probes and the simulator (its scrape goes straight to the engine),
	// switched on at the fault: a slow network path or gateway.
	proxyDelay time.Duration
	// objectives replace causeObjectives.
	objectives []slo.Objective
}

// The clocks of the per-cause tests: probes and evaluations every
// 500 ms, scrapes every second (the default). The diagnosis reads the
// last 3 s; the objectives a p50 over 6 s, so an objective goes pending
// once about half of its window is slow, when the fault has filled the
// diagnosis's shorter window for a while: the why is there when the
// alert is.
const (
	causeEvery  = 500 * time.Millisecond
	causeRecent = 3 * time.Second
	causeWindow = 6 * time.Second
	causeWarmup = 6 * time.Second
	// causeHistSlot is the store's histogram slot: the diagnosis window
	// must hold several (a 3 s window over the default 10 s slots reads
	// the engine's histograms only when a slot's middle falls in it, a
	// third of the time: the old suite's flakiness).
	causeHistSlot = time.Second
	causeHealthy  = 8 * time.Second // every endpoint names none this long before the fault
	causeLimit    = 30 * time.Second
	// causeBound is how many evaluations after its objective went pending
	// a cause may be named (the "within two refreshes").
	causeBound = 2
)

// causeObjectives: TTFT p50 ≤ 50 ms and TPOT p50 ≤ 20 ms over 6 s, which
// the small models keep (about 20 ms and 12 ms) and each fault breaks.
func causeObjectives() []slo.Objective { return objectivesAt(0.050, 0.020) }

// objectivesAt are TTFT and TPOT p50 objectives over causeWindow, in
// seconds, on the sick model; the untouched one keeps causeObjectives.
func objectivesAt(ttft, tpot float64) []slo.Objective { return objectivesOver(ttft, tpot, causeWindow) }

// objectivesOver are TTFT and TPOT p50 objectives over window on the
// sick model.
func objectivesOver(ttft, tpot float64, window time.Duration) []slo.Objective {
	return []slo.Objective{
		{Name: "ttft-p50", Endpoint: "*/sick", Kind: slo.Percentile, Signal: telemetry.TTFT, Percentile: 0.5, Threshold: ttft, Window: window},
		{Name: "tpot-p50", Endpoint: "*/sick", Kind: slo.Percentile, Signal: telemetry.TPOT, Percentile: 0.5, Threshold: tpot, Window: window},
	}
}

// okObjectives are the untouched model's.
func okObjectives() []slo.Objective {
	obj := causeObjectives()
	for i := range obj {
		obj[i].Endpoint = "*/ok"
	}
	return obj
}

// errorObjective: at most share of requests fail over causeWindow.
func errorObjective(share float64) slo.Objective {
	return slo.Objective{Name: "errors", Endpoint: "*/sick", Kind: slo.ErrorRate, Threshold: share, Window: causeWindow}
}

func at(kind sim.EventKind) sim.Event { return sim.Event{At: faultAt, Kind: kind} }

func withFactor(kind sim.EventKind, f float64) sim.Event {
	ev := at(kind)
	ev.Factor = f
	return ev
}

func withStreams(n int) sim.Event {
	ev := at(sim.EventBurst)
	ev.Streams = n
	return ev
}

// causeCases is every cause the simulator produces on one endpoint
// (replica needs siblings: internal/failuresuite's
// TestSickReplicaNamedPrometheus), and a mixed fault.
func causeCases() []causeCase {
	outageBlinks := at(sim.EventOutage)
	outageBlinks.For, outageBlinks.Every = time.Second, 2*time.Second // half the requests fail
	return []causeCase{
		{name: "queueing", want: []diagnosis.Cause{diagnosis.Queueing}, events: []sim.Event{withStreams(12)}},
		{name: "prefill", want: []diagnosis.Cause{diagnosis.Prefill}, events: []sim.Event{withFactor(sim.EventPrefillSlow, 8)},
			probe: func(p *probe.Settings) { p.Prompt = "medium" }}, // the probes' own prefill grows too
		{name: "kv_cache", want: []diagnosis.Cause{diagnosis.KVCache}, events: []sim.Event{withFactor(sim.EventKVPressure, 0.04)},
			spec: func(s *sim.ModelSpec) { s.GPUMemUtilization = 0.116 }},
		{name: "bandwidth", want: []diagnosis.Cause{diagnosis.Bandwidth}, events: []sim.Event{withStreams(24)},
			spec: func(s *sim.ModelSpec) {
				// KV reads weigh as much as the weights: more sequences,
				// more bytes per step.
				s.KVBytesPerToken, s.MaxBatch, s.MaxModelLen = 1<<20, 32, 4096
			}},
		{name: "batching", want: []diagnosis.Cause{diagnosis.Batching}, events: []sim.Event{withStreams(24)},
			spec: func(s *sim.ModelSpec) {
				s.MaxBatch = 32
				s.SeqOverhead = 700 * time.Microsecond // each sequence costs a step this much beyond its bytes
			}},
		{name: "gpu_slowdown", want: []diagnosis.Cause{diagnosis.GPUSlowdown}, events: []sim.Event{withFactor(sim.EventBandwidth, 0.3)}},
		{name: "network", want: []diagnosis.Cause{diagnosis.Network}, proxyDelay: 400 * time.Millisecond},
		{name: "prefix_cache", want: []diagnosis.Cause{diagnosis.PrefixCache}, events: []sim.Event{at(sim.EventPrefixMiss)},
			// The probes repeat a long prompt, cached but its last block,
			// as do the background requests their shared system prompts:
			// a miss prefills all of it. The hit rate is a ratio of
			// counters over the scrape's 10 s rate window: a slower
			// objective.
			cfg:        func(c *sim.Config) { c.PrefixCaching, c.SharedPrefixShare = true, 1 },
			spec:       func(s *sim.ModelSpec) { s.MaxModelLen = 4096 },
			probe:      func(p *probe.Settings) { p.Prompt = "long" },
			objectives: objectivesOver(0.080, 0.020, 20*time.Second)},
		{name: "spec_decode", want: []diagnosis.Cause{diagnosis.SpecDecode}, events: []sim.Event{withFactor(sim.EventSpecAccept, 0.05)},
			spec: func(s *sim.ModelSpec) { s.SpecTokens, s.SpecAcceptRate = 3, 0.8 },
			// About 3 tokens a step (TPOT ≈ 4 ms); the acceptance rate is a
			// ratio of counters over the scrape's 10 s rate window: a
			// slower objective.
			objectives: objectivesOver(0.050, 0.008, 20*time.Second)},
		{name: "errors", want: []diagnosis.Cause{diagnosis.Errors}, events: []sim.Event{outageBlinks},
			objectives: append(causeObjectives(), errorObjective(0.2))},
		// Down is every probe of the diagnosis's 3 s failed: the error
		// objective goes pending once 60 % of its 6 s did.
		{name: "down", want: []diagnosis.Cause{diagnosis.Down}, events: []sim.Event{at(sim.EventOutage)},
			objectives: append(causeObjectives(), errorObjective(0.6))},
		{name: "mixed", want: []diagnosis.Cause{diagnosis.Network, diagnosis.Prefill}, proxyDelay: 400 * time.Millisecond,
			events: []sim.Event{withFactor(sim.EventPrefillSlow, 8)}, probe: func(p *probe.Settings) { p.Prompt = "medium" }},
	}
}

// Each cause the simulator produces, injected alone (and two at once),
// is named with its evidence within two evaluations of its objective
// going pending, through the real probe, scrape and dcgm sources; the
// untouched model beside it names none throughout. Each case logs the
// time from the fault to its named cause.
func TestEachSimulatedCauseNamed(t *testing.T) {
	for _, c := range causeCases() {
		t.Run(c.name, func(t *testing.T) { checkCause(t, c) })
	}
}

// checkCause runs one case on its own simulator, in a synctest bubble:
// the simulator's steps, the probes' clocks and the evaluations all run
// on the bubble's fake clock, so a loaded machine slows the test, never
// the figures it reads.
func checkCause(t *testing.T, c causeCase) {
	synctest.Test(t, func(t *testing.T) {
		sick := diagSpec("sick")
		if c.spec != nil {
			c.spec(&sick)
		}
		var events []sim.Event
		for _, ev := range c.events {
			ev.Model = sick.Name
			events = append(events, ev)
		}
		var offset atomic.Int64
		start := time.Now()
		cfg := sim.Config{Seed: 1, Load: 3, Models: []sim.ModelSpec{diagSpec("ok"), sick}, Scenario: sim.Scenario{Events: events},
			Clock: func() time.Time { return start.Add(time.Since(start) + time.Duration(offset.Load())) }}
		if c.cfg != nil {
			c.cfg(&cfg)
		}
		objectives := c.objectives
		if objectives == nil {
			objectives = causeObjectives()
		}
		objectives = append(objectives, okObjectives()...)
		var gateway *delayProxy
		var evals evaluations
		m, stop := runInBubble(t, cfg, Options{EvalEvery: causeEvery, Objectives: objectives, Now: evals.now,
			Store:     telemetry.StoreConfig{HistResolution: causeHistSlot},
			Diagnosis: diagnosis.Config{Recent: causeRecent, Warmup: causeWarmup, Tau: time.Minute}},
			func(cf *config.Config, pn *pipeNet) {
				for i := range cf.DCGM {
					cf.DCGM[i].Interval = slo.Duration(causeEvery)
				}
				if c.proxyDelay > 0 {
					gateway = newDelayProxy(pn, sick.Name, c.proxyDelay)
				}
				for i := range cf.Endpoints {
					ep := &cf.Endpoints[i]
					if gateway != nil {
						// Probes cross the gateway; the scrape reads the
						// engine's own figures straight.
						// One name for both, so the scrape's rows are the
						// probes' ones.
						ep.Metrics, ep.URL, ep.Name = ep.URL+"/metrics", "http://"+gatewayHost, "served"
					}
					ep.Probe.Interval = slo.Duration(causeEvery)
					ep.Probe.MaxTokens = 24
					ep.Probe.Prompt = "short"
					if ep.Model != sick.Name {
						continue
					}
					if c.probe != nil {
						c.probe(ep.Probe)
					}
				}
			})
		defer stop()
		names := waitHealthy(t, m, "ok", sick.Name)
		okName, sickName := names[0], names[1]

		faultStart := time.Now()
		offset.Store(int64(faultAt))
		if gateway != nil {
			gateway.on.Store(true)
		}
		named := map[diagnosis.Cause]diagnosis.Finding{}
		var seen []string
		var pending time.Time
		pollFor(t, causeLimit, func() bool {
			latest := m.Diagnosis.Latest()
			if d := latest[okName]; d.Leading() != diagnosis.None {
				t.Fatalf("untouched model names %s: %s", d.Leading(), words(d))
			}
			d := latest[sickName]
			if w := words(d) + clientWords(d.Decomposition); len(seen) == 0 || seen[len(seen)-1] != w {
				seen = append(seen, w)
			}
			for _, f := range d.Causes {
				if _, done := named[f.Cause]; !done && slices.Contains(c.want, f.Cause) {
					named[f.Cause] = f
				}
			}
			if pending.IsZero() {
				pending = activeSince(m.SLO.Current(), sickName)
			}
			return len(named) == len(c.want) && !pending.IsZero()
		}, func() string {
			return fmt.Sprintf("%d of %v named, objective pending at %v; read since the fault: %q", len(named), c.want, pending, seen)
		})
		for _, want := range c.want {
			f := named[want]
			checkEvidence(t, f)
			after := "before"
			n := evals.between(pending, f.Since)
			if f.Since.After(pending) {
				after = fmt.Sprintf("%d evaluations after", n)
			}
			t.Logf("%-12s named %4.1fs (%2d evaluations) after the fault, %s its objective went pending (%.1fs after the fault); evidence: %s",
				want, f.Since.Sub(faultStart).Seconds(), evals.between(faultStart, f.Since), after, pending.Sub(faultStart).Seconds(), f.EvidenceWords())
			if n > causeBound {
				t.Errorf("%s named %d evaluations (%s) after its objective went pending, want ≤ %d; read %q",
					want, n, f.Since.Sub(pending).Round(time.Millisecond), causeBound, seen)
			}
		}
	})
}

// waitHealthy waits until every model's endpoint has named none, with no
// objective pending or firing, for causeHealthy in a row (the baselines
// warm), and returns their names.
func waitHealthy(t *testing.T, m *Monitor, models ...string) (names []string) {
	t.Helper()
	since := map[string]time.Time{}
	pollFor(t, 60*time.Second, func() bool {
		latest := m.Diagnosis.Latest()
		names = names[:0]
		ready := true
		for _, model := range models {
			n := endpointOf(t, m, model)
			names = append(names, n)
			d, ok := latest[n]
			if n == "" || !ok || d.Leading() != diagnosis.None || !activeSince(m.SLO.Current(), n).IsZero() {
				delete(since, model)
				ready = false
				continue
			}
			if _, ok := since[model]; !ok {
				since[model] = d.At
			}
			ready = ready && d.At.Sub(since[model]) >= causeHealthy
		}
		return ready
	}, func() string {
		var out []string
		for n, d := range m.Diagnosis.Latest() {
			out = append(out, n+": "+words(d))
		}
		return fmt.Sprintf("every endpoint healthy for %s: %q", causeHealthy, out)
	})
	return names
}

// clientWords are the probes' TTFT and the decode step, for a failure's
// readings.
func clientWords(dc diagnosis.Decomposition) string {
	out := ""
	if dc.ClientTTFTMs != nil {
		out += fmt.Sprintf(" ttft %.0fms", *dc.ClientTTFTMs)
	}
	if dc.TPOTMs != nil {
		out += fmt.Sprintf(" step %.1fms", *dc.TPOTMs)
	}
	if dc.PrefillMs != nil {
		out += fmt.Sprintf(" prefill %.1fms", *dc.PrefillMs)
	}
	return out
}

// activeSince is when the earliest pending or firing alert on endpoint
// went active; zero when none is.
func activeSince(alerts []slo.Alert, endpoint string) time.Time {
	var first time.Time
	for _, a := range alerts {
		if a.Endpoint == endpoint && (a.State == slo.Pending || a.State == slo.Firing) && (first.IsZero() || a.ActiveAt.Before(first)) {
			first = a.ActiveAt
		}
	}
	return first
}

// checkEvidence requires a finding's numbers: at least one figure, and
// one compared with a baseline (own, siblings or a documented ratio)
// unless it is down (every probe failed says it all), and a next step.
func checkEvidence(t *testing.T, f diagnosis.Finding) {
	t.Helper()
	if len(f.Evidence) == 0 || f.Next == "" {
		t.Errorf("%s without evidence or next step: %+v", f.Cause, f)
		return
	}
	compared := slices.ContainsFunc(f.Evidence, func(e diagnosis.Evidence) bool { return e.Baseline != nil && e.BaselineFrom != "" })
	if !compared && f.Cause != diagnosis.Down {
		t.Errorf("%s: no figure compared with a baseline: %s", f.Cause, f.EvidenceWords())
	}
}

// gatewayHost is the delaying proxy's in-memory host.
const gatewayHost = "gateway.pipe:80"

// delayProxy is a reverse proxy in front of the simulator that, once
// on, holds each request for model for delay before passing it on: a
// slow network path or gateway to that model's engine. The engine's own
// figures do not see the delay.
type delayProxy struct {
	delay time.Duration
	on    atomic.Bool
}

func newDelayProxy(pn *pipeNet, model string, delay time.Duration) *delayProxy {
	p := &delayProxy{delay: delay}
	mark := []byte(`"model":"` + model + `"`)
	target := &url.URL{Scheme: "http", Host: bubbleSimHost}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     &http.Transport{DialContext: pn.dial},
		FlushInterval: -1, // stream the tokens as they come
	}
	pn.serve(gatewayHost, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if p.on.Load() && bytes.Contains(body, mark) {
			hold := time.NewTimer(p.delay)
			select {
			case <-hold.C:
			case <-r.Context().Done():
				hold.Stop()
				return
			}
		}
		// The upstream request outlives a disconnect the server reads
		// from a pipe as one (its background read sees the pipe's
		// deadline, not a close); the stream ends on its own.
		rp.ServeHTTP(w, r.WithContext(context.WithoutCancel(r.Context())))
	}))
	return p
}
