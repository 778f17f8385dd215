//go:build integration

package promql

import (
	"context"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/promtest"
)

// promIntegration starts a test that runs a real Prometheus: parallel
// (its time is mostly waiting for scrapes), skipped without the binary;
// the context ends with the test.
func promIntegration(t *testing.T) context.Context {
	t.Helper()
	t.Parallel()
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

// sourceOver starts a PromQL source over prom, recording what it emits,
// and returns with it a poll: refresh until done holds, once a second for
// up to 30 s, else fail naming what and the state then.
func sourceOver(t *testing.T, ctx context.Context, prom *promtest.Server) (*recorder, func(what string, done func() bool, state func() string)) {
	t.Helper()
	rec := &recorder{}
	s, err := New(Config{URL: prom.URL, ScrapeInterval: promtest.ScrapeInterval, Refresh: time.Second, Window: time.Minute}, rec)
	if err != nil {
		t.Fatal(err)
	}
	return rec, func(what string, done func() bool, state func() string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			if err := s.RefreshOnce(ctx); err != nil {
				t.Fatalf("RefreshOnce: %v", err)
			}
			if done() {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 30s: %s", what, state())
			}
			time.Sleep(time.Second)
		}
	}
}
