package exporter

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// QA: against a `kill -STOP`ped server /healthz flapped 200/503 every
// stall timeout, because the probe of a hung target reports only when its
// stall timeout fires, later than 3 probe intervals. A real probe runner
// against a listener that never accepts (what a stopped process looks
// like: the kernel completes the handshake, nothing answers) must leave
// the exporter healthy at the worst moment, just before each result.
func TestHealthzStaysOkWhileTargetHangs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }() // never accepted: only the test's

	const (
		interval = 100 * time.Millisecond
		stall    = 300 * time.Millisecond
		timeout  = time.Second
	)
	e := New(Options{ProbeTimeout: timeout})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var mu sync.Mutex
	var kinds, unhealthy []string
	results := make(chan struct{}, 100)
	sink := telemetry.SinkFunc(func(o telemetry.Observation) {
		if o.Kind == telemetry.KindProbe {
			// Judged before the result lands: the oldest the last one gets.
			if ok, reason := e.Health(); !ok {
				mu.Lock()
				unhealthy = append(unhealthy, reason)
				mu.Unlock()
			}
			mu.Lock()
			kinds = append(kinds, o.Probe.ErrorKind)
			mu.Unlock()
			defer func() { results <- struct{}{} }()
		}
		e.Observe(o)
	})
	runner, err := probe.NewRunner(probe.Options{URL: "http://" + ln.Addr().String(), Model: "m", MaxTokens: 4,
		Interval: interval, StallTimeout: stall, Timeout: timeout}, sink)
	if err != nil {
		t.Fatal(err)
	}
	probeCtx, stopProbe := context.WithCancel(ctx)
	probed := make(chan error, 1)
	go func() { probed <- runner.Run(probeCtx) }()
	for range 5 {
		select {
		case <-results:
		case <-ctx.Done():
			t.Fatal("timed out waiting for 5 probe results")
		}
	}
	stopProbe()
	if err := <-probed; err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, k := range kinds[:5] {
		if k != string(probe.ErrStall) {
			t.Errorf("probe results %v, want stalls of the hung target", kinds)
			break
		}
	}
	for _, r := range unhealthy {
		t.Errorf("unhealthy while the probe of a hung target ran: %s", r)
	}
	if ok, reason := e.Health(); !ok {
		t.Errorf("unhealthy after the results: %s", reason)
	} else {
		t.Logf("healthz: %s", reason)
	}
}
