package monitor

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/telemetry/telemetrytest"
)

// An endpoint added while the monitor runs is probed and scraped at
// once; retired, its loops have ended when RetireEndpoint returns (no
// observation of it after, while another endpoint added then is
// measured), and no loop goroutine is left once both are retired.
func TestEndpointAddedAndRetiredWhileRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two simulators")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a := startSim(t, ctx, sim.Config{Load: 1, CoarseTiming: true})
	b := startSim(t, ctx, sim.Config{Load: 1, CoarseTiming: true})
	m := New(Options{})
	seen := &telemetrytest.Collector{}
	m.AddSink(seen)
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// count is how many observations of kind the sources of s made.
	count := func(s *sim.Server, kind telemetry.Kind, source string) int {
		n := 0
		for _, o := range seen.All() {
			if o.Kind == kind && strings.HasPrefix(o.Source, source+":"+s.URL()+"/") {
				n++
			}
		}
		return n
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		for ctx.Err() == nil {
			if cond() {
				return
			}
			time.Sleep(20 * time.Millisecond) // polling, bounded by ctx
		}
		srcs := map[string]bool{}
		for _, o := range seen.All() {
			srcs[string(o.Kind)+" "+o.Source] = true
		}
		t.Fatalf("%s: not within the deadline; seen %v", what, srcs)
	}
	endpoint := func(name string, s *sim.Server) config.Endpoint {
		c := config.Config{Endpoints: []config.Endpoint{{Name: name, URL: s.URL(), Probe: &probe.Settings{Interval: slo.Duration(200 * time.Millisecond), MaxTokens: 4}}}}
		if err := c.Complete(); err != nil {
			t.Fatal(err)
		}
		return c.Endpoints[0]
	}

	if err := m.AddEndpoint(endpoint("pod-a", a)); err != nil {
		t.Fatal(err)
	}
	until("pod-a probed and scraped", func() bool {
		return count(a, telemetry.KindProbe, "probe") > 0 && count(a, telemetry.KindSource, "scrape") > 0
	})
	if err := m.AddEndpoint(endpoint("pod-a", a)); err == nil {
		t.Error("pod-a added twice")
	}
	if !m.RetireEndpoint("pod-a") {
		t.Fatal("pod-a not retired")
	}
	if m.RetireEndpoint("pod-a") {
		t.Error("pod-a retired twice")
	}
	after := len(seen.All())
	var ofA int
	for _, o := range seen.All() {
		if strings.Contains(o.Source, a.URL()) {
			ofA++
		}
	}

	if err := m.AddEndpoint(endpoint("pod-b", b)); err != nil {
		t.Fatal(err)
	}
	until("pod-b probed twice", func() bool { return count(b, telemetry.KindProbe, "probe") >= 2 })
	for _, o := range seen.All()[after:] {
		if strings.Contains(o.Source, a.URL()) {
			t.Fatalf("pod-a observed after it was retired (%d before): %+v", ofA, o)
		}
	}
	m.RetireEndpoint("pod-b")
	until("no endpoint loop left", func() bool { return loopsRunning() == 0 })
}

// loopsRunning counts the goroutines running an endpoint's loop.
func loopsRunning() int {
	buf := make([]byte, 1<<20)
	n := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "monitor.(*Monitor).startFor") || strings.Contains(g, "probe.(*Runner).Run") || strings.Contains(g, "scrape.(*Scraper).Run") {
			n++
		}
	}
	return n
}
