// Package simtest starts the simulator for tests: on loopback, stopped and
// checked for a clean close when the test ends.
package simtest

import (
	"context"
	"testing"

	"github.com/ttftop/ttftop/internal/sim"
)

// Start builds and starts a simulator from cfg (give Listen a loopback
// address, "127.0.0.1:0"); the test's cleanup stops it and fails the test
// when it does not close cleanly.
func Start(t testing.TB, cfg sim.Config) *sim.Server {
	t.Helper()
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}
