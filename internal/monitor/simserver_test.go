package monitor

import (
	"context"
	"testing"

	"github.com/ttftop/ttftop/internal/sim"
)

// startSim starts a simulator on loopback for the test, until ctx ends
// or the test does.
func startSim(t *testing.T, ctx context.Context, cfg sim.Config) *sim.Server {
	t.Helper()
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}
