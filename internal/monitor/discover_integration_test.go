//go:build integration

package monitor

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// A server that is dead when ttftop starts is an outage under its own
// name (it fires), not silence; once it lists its models the placeholder
// retires with a RESOLVED entry and every model is probed.
func TestDeadAtStartFiresThenRetires(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now

	m := New(Options{Objectives: []slo.Objective{slo.AvailabilityObjective()}, EvalEvery: 50 * time.Millisecond})
	if err := m.AddProbe(probe.Options{URL: "http://" + addr, Interval: 100 * time.Millisecond, Timeout: 2 * time.Second}, ""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()

	firing := func(endpoint string) bool {
		for _, a := range m.SLO.Current() {
			if a.Endpoint == endpoint && a.Objective == "availability" && a.State == slo.Firing {
				return true
			}
		}
		return false
	}
	start := time.Now()
	waitFor(t, "the dead server's availability alert firing", func() bool { return firing(addr) })
	took := time.Since(start)
	t.Logf("dead at start: FIRING after %v", took)
	if p := m.Store.Probes(addr); len(p) == 0 || p[len(p)-1].OK || p[len(p)-1].ErrorKind != "connect" ||
		!strings.Contains(p[len(p)-1].Error, "cannot reach "+addr) {
		t.Errorf("probe records of the dead server: %+v", p)
	}

	cfg := sim.DemoConfig()
	cfg.Scenario = sim.Scenario{}
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srvLn, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	srv := &http.Server{Handler: s.Handler()}
	go func() { _ = srv.Serve(srvLn) }()
	defer srv.Close()

	waitFor(t, "the placeholder retired and the models probed", func() bool {
		names := m.Store.EndpointNames()
		for _, n := range names {
			if n == addr {
				return false
			}
		}
		return len(names) == len(s.Models())
	})
	h := m.SLO.History()
	if len(h) != 1 || h[0].Endpoint != addr || h[0].State != slo.Resolved || !strings.Contains(h[0].Reason, "reachable again") {
		t.Errorf("history: %+v", h)
	}
	for _, a := range m.SLO.Current() {
		if a.Endpoint == addr {
			t.Errorf("retired endpoint still judged: %+v", a)
		}
	}

	// The failed listings reported with an interval, the probes after
	// them without: the server's probe figures stay live well past three
	// of those intervals (and the 5 s floor), not stale for good.
	retired := time.Now()
	model := s.Models()[0].Name
	var last telemetry.SignalSnapshot
	deadline := retired.Add(20 * time.Second)
	for time.Since(retired) < 7*time.Second || last.State != telemetry.Live {
		if time.Now().After(deadline) {
			t.Fatalf("%s's TTFT %s (%s) %v after the server came back", model, last.State, last.Err, time.Since(retired).Round(time.Second))
		}
		for _, n := range m.Store.EndpointNames() {
			if strings.HasSuffix(n, model) {
				last, _ = m.Store.Signal(n, telemetry.TTFT, time.Now(), time.Minute)
			}
		}
		if time.Since(retired) >= 7*time.Second && last.State != telemetry.Live {
			t.Fatalf("%s's TTFT %s (%s) 7s after the server came back, probed every 100ms", model, last.State, last.Err)
		}
		time.Sleep(100 * time.Millisecond) // polling a wall-clock span: the probes run in real time
	}
}
