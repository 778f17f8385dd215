package sim

import (
	"testing"
	"time"
)

// The demo setup tells its story: the degrading model's TPOT crosses a
// 50 ms SLO between 30 s and 75 s while the healthy one stays fast.
func TestDemoConfig(t *testing.T) {
	clk := newFakeClock()
	cfg := DemoConfig()
	cfg.Clock = clk.Now
	s := startServer(t, cfg)
	if s.URL() == "" || s.DCGMURL() == "" {
		t.Fatal("demo listeners not bound")
	}
	step := func(model string) time.Duration {
		for _, st := range s.Stats() {
			if st.Model == model {
				return st.MeanStepTime
			}
		}
		return 0
	}
	eventually(t, 5*time.Second, "a second of load", func() bool {
		return s.Stats()[1].Steps > 60 && step(DemoDegrading) > 0 && step(DemoHealthy) > 0
	})
	if d := step(DemoDegrading); d > 40*time.Millisecond {
		t.Errorf("degrading model before 30 s: step %v", d)
	}
	clk.Set(40 * time.Second)
	eventually(t, 5*time.Second, "degradation", func() bool { return step(DemoDegrading) > 60*time.Millisecond })
	if d := step(DemoHealthy); d > 15*time.Millisecond {
		t.Errorf("healthy model step %v", d)
	}
	clk.Set(80 * time.Second)
	eventually(t, 5*time.Second, "recovery", func() bool { return step(DemoDegrading) < 40*time.Millisecond })
}
