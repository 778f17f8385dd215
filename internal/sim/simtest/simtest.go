// Package simtest starts the simulator for tests: on loopback, stopped and
// checked for a clean close when the test ends.
package simtest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
)

// New builds a simulator from cfg without starting its listeners (serve
// its Handler or DCGMHandler where the test needs, a network namespace's
// socket); the test's cleanup closes it and fails the test when it does
// not close cleanly.
func New(t testing.TB, cfg sim.Config) *sim.Server {
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

// Start builds and starts a simulator from cfg (give Listen a loopback
// address, "127.0.0.1:0"); the test's cleanup stops it and fails the test
// when it does not close cleanly.
func Start(t testing.TB, cfg sim.Config) *sim.Server {
	t.Helper()
	s := New(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // cleanups run last first: cancelled, then closed
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// SlowKVAfter is when StartPD's deployment's KV transfers turn 4× slower
// on its scenario clock.
const SlowKVAfter = time.Hour

// StartPD starts the tests' disaggregated deployment of an 8B model on
// loopback: one prefill and two decode workers behind the router, KV
// transfers at 2 GB/s, no load of its own. Its scenario clock is real time
// plus shift, so storing SlowKVAfter in shift slows its KV transfers 4×.
// The test's cleanup closes it.
func StartPD(t testing.TB, seed int64, shift *atomic.Int64) *sim.PD {
	t.Helper()
	pd, err := sim.NewPD(sim.PDConfig{
		Model:   sim.ModelSpec{Name: "org/pd", Params: 8.03e9, GPU: "H100 SXM", MaxBatch: 64},
		Prefill: 1, Decode: 2, Seed: seed, KVBandwidth: 2e9,
		Clock:    func() time.Time { return time.Now().Add(time.Duration(shift.Load())) },
		Scenario: sim.Scenario{Events: []sim.Event{{At: SlowKVAfter, Kind: sim.EventKVSlow, Factor: 4}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		if err := pd.Close(); err != nil {
			t.Error(err)
		}
	})
	if err := pd.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return pd
}
