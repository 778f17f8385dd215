//go:build unix

package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/telemetry"
)

// feed stands in for the sources: n endpoints, each probed and scraped
// once a second (the shape of bench/tui_pty's synthetic feed, at 1 Hz and
// without live text, which only the detail view shows).
func feed(ctx context.Context, m *monitor.Monitor, n int) {
	const probe, scrape = "probe:http://sim", "scrape:http://sim/metrics"
	now := time.Now()
	for e := range n {
		name := fmt.Sprintf("sim-model-%02d", e)
		m.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, Endpoint: name, At: now,
			Info: &telemetry.Endpoint{Name: name, Model: "org/model-" + name, Engine: telemetry.EngineVLLM}})
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for sec := 0; ; sec++ {
		select {
		case <-ctx.Done():
			return
		case now = <-tick.C:
		}
		for e := range n {
			name := fmt.Sprintf("sim-model-%02d", e)
			wob := math.Sin(float64(sec+e) / 7)
			obs := func(sig telemetry.Signal, v float64, src string) {
				m.Observe(telemetry.Observation{Kind: telemetry.KindSample, Endpoint: name, Signal: sig, Value: v,
					At: now, Source: src, Interval: time.Second})
			}
			ttft, tpot := 0.05*(1+float64(e)/4)*(1+0.2*wob), 0.012*(1+0.1*wob)
			obs(telemetry.TTFT, ttft, probe)
			obs(telemetry.TPOT, tpot, probe)
			obs(telemetry.ITL, tpot, probe)
			obs(telemetry.OutputTPS, 1/tpot, probe)
			obs(telemetry.ProbeSuccess, 1, probe)
			m.Observe(telemetry.Observation{Kind: telemetry.KindProbe, Endpoint: name, At: now, Source: probe,
				Probe: &telemetry.ProbeRecord{OK: true, Status: 200, TTFTms: ttft * 1000, TPOTms: tpot * 1000, OutputTokens: 64}})
			obs(telemetry.Running, float64(4+sec%5), scrape)
			obs(telemetry.Waiting, float64(sec%3), scrape)
			obs(telemetry.KVCache, 0.4+0.1*wob, scrape)
			obs(telemetry.GPUMemBW, 0.6+0.1*wob, "dcgm:http://sim")
			obs(telemetry.MBU, 0.5+0.1*wob, scrape)
		}
		m.Observe(telemetry.Observation{Kind: telemetry.KindSource, Source: probe, At: now,
			Status: &telemetry.SourceStatus{Name: "probe", Kind: telemetry.SourceProbe, State: telemetry.Live, LastOK: now}})
	}
}
