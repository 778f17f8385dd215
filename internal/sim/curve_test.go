package sim

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func defaultModel(t *testing.T, name string) ModelSpec {
	t.Helper()
	for _, m := range DefaultModels() {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no default model %q", name)
	return ModelSpec{}
}

// The 8B preset's predicted TPOT bends with the batch as the published
// H100 measurements do (BatchingCurve's comment): ≈7 ms alone, at least
// 1.25× that with 64 short streams, rising monotonically.
func TestBatchingCurvePrediction(t *testing.T) {
	m := defaultModel(t, DemoHealthy)
	const ctx = 150 // live KV tokens per stream: short prompt, part of an answer
	one := m.BatchStepTime(1, ctx, 1)
	if one < 6.5e-3 || one > 7.5e-3 {
		t.Errorf("TPOT at 1 stream %.2f ms, want ≈7 (measured 6.5)", one*1e3)
	}
	prev := one
	for _, c := range []int{2, 4, 8, 16, 32, 64, 128, 256} {
		got := m.BatchStepTime(c, c*ctx, 1)
		if got <= prev {
			t.Errorf("TPOT at %d streams %.2f ms, not above %.2f", c, got*1e3, prev*1e3)
		}
		prev = got
	}
	if r := m.BatchStepTime(64, 64*ctx, 1) / one; r < 1.25 || r > 2 {
		t.Errorf("TPOT(64)/TPOT(1) = %.2f, want 1.25–2", r)
	}
	// A hand-made spec without the curve terms stays a bandwidth model.
	bare := stepModel("m", 10*time.Millisecond, 1e6)
	if got := bare.BatchStepTime(64, 0, 1); math.Abs(got-10e-3) > 1e-6 {
		t.Errorf("bare spec at 64 streams: %.4f ms, want 10", got*1e3)
	}
}

// The running engine follows the prediction: with 64 streams its steps
// last BatchStepTime(64, …), and its DRAM figures are the bytes of those
// steps over their (longer) duration, so MBU falls below the efficiency
// as compute and overhead take a share of each step. In a synctest
// bubble (in-process streams and DCGM page, Go timers only), so the steps
// keep the model's time whatever the machine's load (steps ran 10 % late
// under -race on a loaded 2-core machine).
func TestEngineFollowsBatchingCurve(t *testing.T) {
	synctest.Test(t, testEngineFollowsBatchingCurve)
}

func testEngineFollowsBatchingCurve(t *testing.T) {
	m := defaultModel(t, DemoHealthy)
	m.Jitter = 0
	s, err := New(Config{Models: []ModelSpec{m}, CoarseTiming: true}) // watched: on time, by Go timers
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	const streams, prompt = 64, 100
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for range streams {
		st, err := s.Generate(ctx, Request{Model: m.Name, PromptTokens: prompt, MaxTokens: 2000, IgnoreEOS: true})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer st.Close()
			for {
				if _, fin, err := st.Recv(); err != nil || fin != "" {
					return
				}
			}
		}()
	}
	eventually(t, 5*time.Second, "64 running", func() bool { return s.Stats()[0].Running == streams })
	start := time.Now()
	var st ModelStats
	eventually(t, 5*time.Second, "a full second of batch-64 steps", func() bool {
		st = s.Stats()[0]
		return time.Since(start) > 1100*time.Millisecond && st.Steps > 0
	})
	// Live KV per stream: the prompt plus what it generated so far.
	kvLow := streams * (prompt + 1)
	kvHigh := streams * (prompt + int(time.Since(start)/(5*time.Millisecond)) + 200)
	lo, hi := m.BatchStepTime(streams, kvLow, 1), m.BatchStepTime(streams, kvHigh, 1)
	got := st.MeanStepTime.Seconds()
	if got < lo*0.97 || got > hi*1.03 {
		t.Errorf("mean step %.2f ms, want within the prediction %.2f–%.2f ms", got*1e3, lo*1e3, hi*1e3)
	}
	t.Logf("mean step %.2f ms (predicted %.2f–%.2f), MBU %.3f, DRAM active %.3f", got*1e3, lo*1e3, hi*1e3, st.MBU, st.DRAMActive)
	if one := m.DecodeStepTime(prompt, 1); got < 1.25*one {
		t.Errorf("step at 64 streams %.2f ms < 1.25 × %.2f ms at 1", got*1e3, one*1e3)
	}
	// MBU = bytes per step / step time / peak, for the step time served.
	g, _ := LookupGPU(m.GPU)
	kv := float64(kvLow+kvHigh) / 2
	wantMBU := (m.Params*m.DtypeBytes + kv*m.KVBytesPerToken) / got / g.PeakBW
	if math.Abs(st.MBU-wantMBU) > 0.08 || st.MBU >= m.Efficiency {
		t.Errorf("MBU %.3f, want ≈ %.3f (bytes / step / peak) and below efficiency %.2f", st.MBU, wantMBU, m.Efficiency)
	}
	rec := httptest.NewRecorder()
	s.DCGMHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	dcgm := map[string]float64{}
	for name, f := range parseMetrics(t, rec.Body.Bytes()) {
		dcgm[name] = f.Metric[0].GetGauge().GetValue() + f.Metric[0].GetCounter().GetValue() // one of them is set
	}
	if d := dcgm["DCGM_FI_PROF_DRAM_ACTIVE"]; math.Abs(d-st.DRAMActive) > 0.1 || math.Abs(d-wantMBU) > 0.1 {
		t.Errorf("DRAM active %.3f, engine %.3f, want ≈ %.3f with the engine busy", d, st.DRAMActive, wantMBU)
	}
}
