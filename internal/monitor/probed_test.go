package monitor

import (
	"context"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/probetest"
	"github.com/ttftop/ttftop/sources/probe"
)

// Each model a server lists is probed under its own name, and ProbedAs
// gives that name's options (URL, model, headers) for a view to send it
// other requests the same way (the dashboard's race); a name that is not
// probed has none.
func TestProbedAsNamesEachProbedModel(t *testing.T) {
	srv := probetest.StartPaced(t, probetest.Pace{TTFT: time.Millisecond, Gap: time.Millisecond, Answer: 2})
	m := New(Options{EvalEvery: 50 * time.Millisecond})
	o := probe.Options{URL: srv.URL, Interval: time.Hour, Timeout: 5 * time.Second,
		Headers: []probe.Header{{Name: "X-Team", Value: "demo"}}}
	if err := m.AddProbe(o, ""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()

	p, err := probe.New(probe.Options{URL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	name := p.Endpoint().Name
	p.Close()
	var got probe.Options
	waitFor(t, "the model's probe options", func() bool {
		var ok bool
		got, ok = m.ProbedAs(name)
		return ok
	})
	if got.Model != "m" || got.URL != srv.URL || len(got.Headers) != 1 || got.Headers[0].Name != "X-Team" {
		t.Errorf("ProbedAs(%q) = %+v; want the probe's URL, model and headers", name, got)
	}
	if _, ok := m.ProbedAs("scraped-only"); ok {
		t.Error("an endpoint that is not probed has probe options")
	}
}
