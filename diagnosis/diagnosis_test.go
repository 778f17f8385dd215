package diagnosis

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// figs are an endpoint's figures in display units, by signal; the client
// ones under probe.
type figs struct {
	server map[telemetry.Signal]float64
	probe  map[telemetry.Signal]float64
}

// healthy is a steady 8B-on-an-H100-like endpoint: TTFT 100 ms (5 queue,
// 95 prefill), 10 ms steps at 50 % MBU (a 5 ms floor), 8 running.
func healthy() figs {
	return figs{
		server: map[telemetry.Signal]float64{
			telemetry.TTFT: 100, telemetry.QueueTime: 5, telemetry.PrefillTime: 95, telemetry.ITL: 10,
			telemetry.MBU: 50, telemetry.GPUMemBW: 45, telemetry.GPUPower: 400, telemetry.Running: 8,
			telemetry.Waiting: 0, telemetry.KVCache: 40, telemetry.Preemptions: 0, telemetry.PrefixCacheHit: 60,
			telemetry.SpecAccept: 70, telemetry.SpecAcceptLen: 2.4, telemetry.RequestRate: 10,
			telemetry.PromptTPS: 5000, telemetry.ErrorRate: 0,
		},
		probe: map[telemetry.Signal]float64{telemetry.TTFT: 120, telemetry.TPOT: 11, telemetry.ErrorRate: 0},
	}
}

func (f figs) with(server map[telemetry.Signal]float64, probe map[telemetry.Signal]float64) figs {
	out := figs{server: maps.Clone(f.server), probe: maps.Clone(f.probe)}
	maps.Copy(out.server, server)
	maps.Copy(out.probe, probe)
	return out
}

func liveFigure(sig telemetry.Signal, v float64, source string) telemetry.SignalSnapshot {
	s := telemetry.SignalSnapshot{Unit: sig.Info().Unit, Source: source, State: telemetry.Live, Count: 10}
	if sig.Info().Distribution {
		s.P50 = &v
		if source != "probe:x" {
			s.Mean = &v
		}
	} else {
		s.Value = &v
	}
	if sig == telemetry.MBU {
		s.Approx = true
	}
	return s
}

// endpoint builds the snapshot a probed and scraped endpoint has: the
// probes' figures first, the engine's beside them.
func endpoint(name string, f figs) telemetry.EndpointSnapshot {
	es := telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: name},
		Signals: map[telemetry.Signal]telemetry.SignalSnapshot{}, Server: map[telemetry.Signal]telemetry.SignalSnapshot{}}
	for sig, v := range f.server {
		if _, probed := f.probe[sig]; probed {
			es.Server[sig] = liveFigure(sig, v, "scrape:x")
		} else {
			es.Signals[sig] = liveFigure(sig, v, "scrape:x")
		}
	}
	for sig, v := range f.probe {
		es.Signals[sig] = liveFigure(sig, v, "probe:x")
	}
	return es
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// warmed returns a Diagnoser fed 40 s of healthy refreshes of the
// endpoints, and the time of the next refresh.
func warmed(t *testing.T, eps ...telemetry.EndpointSnapshot) (*Diagnoser, time.Time) {
	t.Helper()
	d := New(Config{})
	now := t0
	for range 40 {
		for _, diag := range d.Update(telemetry.Snapshot{At: now, Endpoints: eps}, nil) {
			if diag.Leading() != None {
				t.Fatalf("healthy %s named %+v", diag.Endpoint, diag.Causes)
			}
		}
		now = now.Add(time.Second)
	}
	return d, now
}

func causes(d Diagnosis) []Cause {
	var out []Cause
	for _, f := range d.Causes {
		out = append(out, f.Cause)
	}
	return out
}

func find(t *testing.T, d Diagnosis, c Cause) Finding {
	t.Helper()
	for _, f := range d.Causes {
		if f.Cause == c {
			return f
		}
	}
	t.Fatalf("%s: no %s in %v", d.Endpoint, c, causes(d))
	return Finding{}
}

// evidence checks that f shows figure with value want against baseline
// base (nil: no baseline).
func evidence(t *testing.T, f Finding, figure string, want float64, base *float64, from string) {
	t.Helper()
	for _, e := range f.Evidence {
		if e.Figure != figure {
			continue
		}
		if e.Value != want {
			t.Errorf("%s evidence %s = %v, want %v", f.Cause, figure, e.Value, want)
		}
		switch {
		case base == nil && e.Baseline != nil:
			t.Errorf("%s evidence %s has baseline %v", f.Cause, figure, *e.Baseline)
		case base != nil && (e.Baseline == nil || *e.Baseline != *base || e.BaselineFrom != from):
			t.Errorf("%s evidence %s baseline %v from %q, want %v from %q", f.Cause, figure, e.Baseline, e.BaselineFrom, *base, from)
		}
		return
	}
	t.Errorf("%s: no evidence %s in %+v", f.Cause, figure, f.Evidence)
}

func pending(endpoint string, sig telemetry.Signal) []slo.Alert {
	return []slo.Alert{{Objective: string(sig) + "-p95", Endpoint: endpoint, Signal: sig, State: slo.Pending}}
}

type server = map[telemetry.Signal]float64
type probe = map[telemetry.Signal]float64

// Each cause, injected into one endpoint's figures after a healthy
// warm-up, is named with its evidence against the baseline; the
// untouched endpoint beside it names none.
func TestEachCauseNamedWithEvidence(t *testing.T) {
	h := healthy()
	cases := []struct {
		name   string
		fault  figs
		alerts []slo.Alert
		want   []Cause
		check  func(t *testing.T, d Diagnosis)
	}{
		{"queueing", h.with(server{telemetry.Waiting: 6, telemetry.QueueTime: 300, telemetry.TTFT: 400}, probe{telemetry.TTFT: 420}),
			pending("sick", telemetry.TTFT), []Cause{Queueing}, func(t *testing.T, d Diagnosis) {
				f := find(t, d, Queueing)
				evidence(t, f, figQueue, 300, ptr(5), "own")
				evidence(t, f, figWaiting, 6, ptr(0), "own")
				evidence(t, f, "queue_share_of_ttft", 75, nil, "")
			}},
		{"prefill with longer prompts", h.with(server{telemetry.PrefillTime: 400, telemetry.TTFT: 405, telemetry.PromptTPS: 20000}, probe{telemetry.TTFT: 425}),
			pending("sick", telemetry.TTFT), []Cause{Prefill}, func(t *testing.T, d Diagnosis) {
				f := find(t, d, Prefill)
				evidence(t, f, figPrefill, 400, ptr(95), "own")
				evidence(t, f, figPromptLen, 2000, ptr(500), "own")
				if f.Next == "" || f.Next[:14] != "prompts grew: " {
					t.Errorf("next step %q does not say the prompts grew", f.Next)
				}
			}},
		{"prefill; the queue grew by little", h.with(server{telemetry.PrefillTime: 400, telemetry.TTFT: 420, telemetry.QueueTime: 20, telemetry.Waiting: 2}, nil),
			pending("sick", telemetry.TTFT), []Cause{Prefill}, nil},
		{"prefill; the queue grew with nothing waiting", h.with(server{telemetry.PrefillTime: 400, telemetry.TTFT: 560, telemetry.QueueTime: 150}, nil),
			pending("sick", telemetry.TTFT), []Cause{Prefill}, nil},
		{"kv_cache", h.with(server{telemetry.KVCache: 97, telemetry.Preemptions: 2, telemetry.Waiting: 3}, nil),
			pending("sick", telemetry.TTFT), []Cause{KVCache}, func(t *testing.T, d Diagnosis) {
				f := find(t, d, KVCache)
				evidence(t, f, figKV, 97, ptr(kvFullPct), "ratio")
				evidence(t, f, figPreempt, 2, ptr(0), "own")
			}},
		{"bandwidth", h.with(server{telemetry.Running: 32, telemetry.ITL: 20, telemetry.MBU: 50}, probe{telemetry.TPOT: 21}),
			nil, []Cause{Bandwidth}, func(t *testing.T, d Diagnosis) {
				f := find(t, d, Bandwidth)
				evidence(t, f, figStep, 20, ptr(10), "own")
				evidence(t, f, figFloor, 10, ptr(5), "own")
				if d.Decomposition.FloorFrom != "estimated" || *d.Decomposition.TPOTFloorMs != 10 {
					t.Errorf("decomposition %+v: want a 10 ms floor from the estimated MBU", d.Decomposition)
				}
			}},
		{"batching", h.with(server{telemetry.Running: 32, telemetry.ITL: 20, telemetry.MBU: 30}, probe{telemetry.TPOT: 21}),
			nil, []Cause{Batching}, func(t *testing.T, d Diagnosis) {
				f := find(t, d, Batching)
				evidence(t, f, figRunning, 32, ptr(8), "own")
				evidence(t, f, figFloor, 6, ptr(5), "own")
			}},
		{"gpu_slowdown", h.with(server{telemetry.ITL: 20, telemetry.MBU: 25, telemetry.GPUMemBW: 22, telemetry.GPUPower: 250}, probe{telemetry.TPOT: 21}),
			pending("sick", telemetry.TPOT), []Cause{GPUSlowdown}, func(t *testing.T, d Diagnosis) {
				f := find(t, d, GPUSlowdown)
				evidence(t, f, figMBU, 25, ptr(50), "own")
				evidence(t, f, figDRAM, 22, ptr(45), "own")
				evidence(t, f, figPower, 250, ptr(400), "own")
				evidence(t, f, figRunning, 8, ptr(8), "own")
			}},
		{"TPOT doubled at the same batch, MBU down a fifth: no call", h.with(server{telemetry.ITL: 20, telemetry.MBU: 40}, nil),
			nil, []Cause{Unclear}, func(t *testing.T, d Diagnosis) {
				if f := find(t, d, Unclear); len(f.Missing) == 0 || !strings.Contains(f.Summary, "tpot_ms 20 vs 10") {
					t.Errorf("unclear: %+v", f)
				}
			}},
		{"TPOT doubled at the same batch and bytes per step: gpu_slowdown", h.with(server{telemetry.ITL: 20, telemetry.MBU: 35}, nil),
			pending("sick", telemetry.TPOT), []Cause{GPUSlowdown}, nil},
		{"TPOT tripled, the batch up by less, MBU fell: gpu_slowdown", h.with(server{telemetry.ITL: 30, telemetry.Running: 13, telemetry.MBU: 17}, nil),
			pending("sick", telemetry.TPOT), []Cause{GPUSlowdown}, nil},
		{"prefill; the gap grew by less than half the client's growth", h.with(server{telemetry.PrefillTime: 695, telemetry.TTFT: 700}, probe{telemetry.TTFT: 1000}),
			pending("sick", telemetry.TTFT), []Cause{Prefill}, nil},
		{"the gap grew while the client's TTFT fell: not network", h.with(server{telemetry.TTFT: 20, telemetry.PrefillTime: 15}, probe{telemetry.TTFT: 90}),
			pending("sick", telemetry.TPOT), []Cause{Unclear}, nil},
		{"network", h.with(nil, probe{telemetry.TTFT: 400}),
			pending("sick", telemetry.TTFT), []Cause{Network}, func(t *testing.T, d Diagnosis) {
				f := find(t, d, Network)
				evidence(t, f, figGap, 300, ptr(20), "own")
				if d.Decomposition.NetworkMs == nil || *d.Decomposition.NetworkMs != 300 {
					t.Errorf("decomposition network %v, want 300 ms", d.Decomposition.NetworkMs)
				}
			}},
		{"prefix_cache", h.with(server{telemetry.PrefixCacheHit: 5, telemetry.PrefillTime: 250, telemetry.TTFT: 255}, probe{telemetry.TTFT: 275}),
			pending("sick", telemetry.TTFT), []Cause{PrefixCache}, func(t *testing.T, d Diagnosis) {
				f := find(t, d, PrefixCache)
				evidence(t, f, figPrefixHit, 5, ptr(60), "own")
				evidence(t, f, figPrefill, 250, ptr(95), "own")
			}},
		{"hit rate collapsed, prefill did not grow: not prefix_cache", h.with(server{telemetry.PrefixCacheHit: 5, telemetry.ITL: 20, telemetry.MBU: 25}, nil),
			pending("sick", telemetry.TPOT), []Cause{GPUSlowdown}, nil},
		{"spec_decode", h.with(server{telemetry.SpecAccept: 20, telemetry.SpecAcceptLen: 1.4}, probe{telemetry.TPOT: 25}),
			nil, []Cause{SpecDecode}, func(t *testing.T, d Diagnosis) {
				f := find(t, d, SpecDecode)
				evidence(t, f, figSpec, 20, ptr(70), "own")
				evidence(t, f, figClientTPOT, 25, ptr(11), "own")
			}},
		{"errors", h.with(server{telemetry.ErrorRate: 60}, probe{telemetry.ErrorRate: 60}),
			nil, []Cause{Errors}, func(t *testing.T, d Diagnosis) {
				evidence(t, find(t, d, Errors), figErrors, 60, ptr(dominatePct), "ratio")
			}},
		{"network and prefill", h.with(server{telemetry.PrefillTime: 400, telemetry.TTFT: 405}, probe{telemetry.TTFT: 800}),
			pending("sick", telemetry.TTFT), []Cause{Network, Prefill}, nil},
		{"kv_cache and queueing", h.with(server{telemetry.KVCache: 98, telemetry.Preemptions: 3, telemetry.Waiting: 20, telemetry.QueueTime: 500, telemetry.TTFT: 600}, probe{telemetry.TTFT: 620}),
			pending("sick", telemetry.TTFT), []Cause{KVCache, Queueing}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, now := warmed(t, endpoint("sick", healthy()), endpoint("well", healthy()))
			out := d.Update(telemetry.Snapshot{At: now, Endpoints: []telemetry.EndpointSnapshot{endpoint("sick", tc.fault), endpoint("well", healthy())}}, tc.alerts)
			if got := causes(out[0]); !slices.Equal(got, tc.want) {
				t.Fatalf("sick: causes %v, want %v (%+v)", got, tc.want, out[0].Causes)
			}
			for _, f := range out[0].Causes {
				if f.Cause == Unclear {
					continue
				}
				if len(f.Evidence) == 0 || f.Next == "" || f.Summary == "" || !f.Since.Equal(now) {
					t.Errorf("%s: finding without evidence, next step, summary or start: %+v", f.Cause, f)
				}
			}
			if got := causes(out[1]); !slices.Equal(got, []Cause{None}) {
				t.Errorf("untouched endpoint: %v", got)
			}
			if tc.check != nil {
				tc.check(t, out[0])
			}
		})
	}
}
