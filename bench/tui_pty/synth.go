package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui"
)

// runSynthetic is the UI alone over a feed shaped like `ttftop demo`:
// n endpoints probed every second, scraped every 2 s, and one response
// streaming word by word. No network, no simulator: the CPU and bytes
// measured are the UI's (plus this small feeder).
func runSynthetic(n int, window time.Duration, cpuprofile string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "tui_pty: cpu profile:", err)
			}
		}()
	}
	store := telemetry.NewStore(telemetry.StoreConfig{})
	go feed(ctx, store, n)
	opts := tui.Options{Theme: "dark", Refresh: time.Second, Window: window}
	if err := tui.Run(ctx, tui.New(store, okAlerts{}, opts), nil, nil); err != nil {
		return fmt.Errorf("tui: %w", err)
	}
	return nil
}

type okAlerts struct{}

func (okAlerts) Alerts() []slo.Alert               { return nil }
func (okAlerts) Badge(string, time.Time) slo.Badge { return slo.BadgeOK }

func feed(ctx context.Context, s *telemetry.Store, n int) {
	const probe, scrape = "probe:http://sim", "scrape:http://sim/metrics"
	for e := 0; e < n; e++ {
		name := fmt.Sprintf("sim-model-%d", e)
		s.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, Endpoint: name, At: time.Now(),
			Info: &telemetry.Endpoint{Name: name, Model: "org/model-" + name, Engine: telemetry.EngineVLLM}})
	}
	words := strings.Fields("the quick brown fox jumps over the lazy dog while tokens stream at a steady pace")
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			// one word of live text every tick on the first endpoint
			w := i % 40
			s.Observe(telemetry.Observation{Kind: telemetry.KindLiveText, Endpoint: "sim-model-0", At: now,
				Live: &telemetry.LiveText{Text: strings.Join(words[:min(w, len(words))], " "), Tokens: w, TPS: 20, Done: w >= len(words)}})
			if i%20 != 0 {
				continue
			}
			sec := i / 20
			for e := 0; e < n; e++ {
				name := fmt.Sprintf("sim-model-%d", e)
				wob := math.Sin(float64(sec+e) / 7)
				obs := func(sig telemetry.Signal, v float64, src string, iv time.Duration) {
					s.Observe(telemetry.Observation{Kind: telemetry.KindSample, Endpoint: name, Signal: sig, Value: v,
						At: now, Source: src, Interval: iv})
				}
				ttft, tpot := 0.05*(1+float64(e)/4)*(1+0.2*wob), 0.012*(1+0.1*wob)
				obs(telemetry.TTFT, ttft, probe, time.Second)
				obs(telemetry.TPOT, tpot, probe, time.Second)
				obs(telemetry.ITL, tpot, probe, time.Second)
				obs(telemetry.OutputTPS, 1/tpot, probe, time.Second)
				obs(telemetry.ProbeSuccess, 1, probe, time.Second)
				s.Observe(telemetry.Observation{Kind: telemetry.KindProbe, Endpoint: name, At: now, Source: probe,
					Probe: &telemetry.ProbeRecord{OK: true, Status: 200, TTFTms: ttft * 1000, TPOTms: tpot * 1000, OutputTokens: 64}})
				if sec%2 == 0 {
					obs(telemetry.Running, float64(4+sec%5), scrape, 2*time.Second)
					obs(telemetry.Waiting, float64(sec%3), scrape, 2*time.Second)
					obs(telemetry.KVCache, 0.4+0.1*wob, scrape, 2*time.Second)
					obs(telemetry.GPUMemBW, 0.6+0.1*wob, "dcgm:http://sim", 2*time.Second)
					obs(telemetry.MBU, 0.5+0.1*wob, scrape, 2*time.Second)
				}
			}
			s.Observe(telemetry.Observation{Kind: telemetry.KindSource, Source: probe, At: now,
				Status: &telemetry.SourceStatus{Name: "probe", Kind: telemetry.SourceProbe, State: telemetry.Live, LastOK: now}})
		}
	}
}
