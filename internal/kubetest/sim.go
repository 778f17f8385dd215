package kubetest

import (
	"testing"

	"github.com/ttftop/ttftop/internal/sim"
)

// Simulator builds a simulator from cfg, closed when the test ends; serve
// its Handler or DCGMHandler from a namespace (NetNS.Serve).
func Simulator(t testing.TB, cfg sim.Config) *sim.Server {
	t.Helper()
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}
