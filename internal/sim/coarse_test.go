package sim

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// TestCoarseEngineBatchesUnwatchedSteps: with CoarseTiming and only
// background load, an engine runs several due steps per wake-up and still
// keeps pace with its schedule; once a client streams, every token is
// delivered on its own step, on time, and never before the request
// arrived. It runs in a synctest bubble (the engine, its load and the
// in-process stream; no listener), so the clock is the bubble's and the
// pace and lateness are exact rather than the machine's load.
func TestCoarseEngineBatchesUnwatchedSteps(t *testing.T) {
	synctest.Test(t, testCoarseEngineBatchesUnwatchedSteps)
}

func testCoarseEngineBatchesUnwatchedSteps(t *testing.T) {
	cfg := DemoConfig()
	cfg.Models = cfg.Models[:1]  // the healthy 8B: ~7 ms steps
	cfg.Models[0].SpecTokens = 0 // one token per step
	cfg.Scenario = Scenario{}
	cfg.CoarseTiming = true
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	e := s.engines[0]
	time.Sleep(time.Second) // the bubble's clock: background streams start within 0.5 s
	steps0, sleeps0, t0 := e.steps.Load(), e.sleeps.Load(), time.Now()
	time.Sleep(2 * time.Second)
	steps, sleeps := e.steps.Load()-steps0, e.sleeps.Load()-sleeps0
	elapsed := time.Since(t0)
	step := time.Duration(e.lastStepNs.Load())
	t.Logf("unwatched: %d steps in %d sleeps over %v (step %v)", steps, sleeps, elapsed, step)
	if sleeps == 0 || steps < 3*sleeps {
		t.Errorf("unwatched engine slept %d times for %d steps: want several steps per wake-up", sleeps, steps)
	}
	if want := float64(elapsed) / float64(step); float64(steps) < 0.85*want {
		t.Errorf("unwatched engine fell behind: %d steps in %v, want about %.0f", steps, elapsed, want)
	}

	st, err := s.Generate(context.Background(), Request{Model: cfg.Models[0].Name, PromptTokens: 200, MaxTokens: 100, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	arrival := st.s.arrival
	var late []time.Duration
	single, calls := 0, 0
	for {
		toks, fin, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if len(st.times) > 0 {
			if calls == 0 && st.times[0] <= arrival {
				t.Fatalf("first token at %v, before the request arrived at %v", st.times[0], arrival)
			}
			late = append(late, time.Duration(s.now()-st.times[len(st.times)-1]))
			calls++
			if len(toks) == 1 {
				single++
			}
		}
		if fin != "" {
			break
		}
	}
	slices.Sort(late)
	p90 := late[len(late)*9/10]
	t.Logf("watched: %d/%d receives had one token; lateness p90 %v", single, calls, p90)
	if single < calls*9/10 {
		t.Errorf("watched stream got tokens in batches: %d of %d receives had one token", single, calls)
	}
	// Half the coarse lag: a watched stream batched as an unwatched one is
	// late by up to the whole lag (p90 near it), while one stepped on time
	// is late only by the scheduler's wake-up, which on a busy machine
	// passed a fixed 10 ms (CI: 10.4 ms).
	if p90 > coarseLag/2 {
		t.Errorf("watched stream tokens late: p90 %v (coarse lag is %v)", p90, coarseLag)
	}
}

// TestCoarseEngineIdleWindowReadsNow: once a coarse engine stops stepping
// (here: an outage), its DRAM activity must fall to zero like any idle
// engine's, not freeze at the last step it ran behind schedule. In a
// synctest bubble, so the sleeps below advance the bubble's clock only.
func TestCoarseEngineIdleWindowReadsNow(t *testing.T) {
	synctest.Test(t, testCoarseEngineIdleWindowReadsNow)
}

func testCoarseEngineIdleWindowReadsNow(t *testing.T) {
	clk := newFakeClock()
	cfg := DemoConfig()
	cfg.Models = cfg.Models[:1]
	cfg.Clock = clk.Now
	cfg.Scenario = Scenario{Events: []Event{{At: time.Minute, Kind: EventOutage, For: time.Minute}}}
	cfg.CoarseTiming = true
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	time.Sleep(2 * time.Second)
	if st := s.Stats()[0]; st.DRAMActive <= 0 {
		t.Fatalf("DRAM active %v under load, want > 0", st.DRAMActive)
	}
	clk.Set(time.Minute + time.Second)
	time.Sleep(1500 * time.Millisecond) // outage noticed within 50 ms, then a 1 s window
	if st := s.Stats()[0]; !st.Outage || st.DRAMActive != 0 {
		t.Fatalf("in an outage: outage %v, DRAM active %v, want true and 0", st.Outage, st.DRAMActive)
	}
}
