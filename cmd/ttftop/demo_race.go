package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/sources/probe"
)

// demoRaceTokens is what `demo --race` asks each model for: enough text
// to watch the fast models finish while the slow ones still type.
const demoRaceTokens = 200

// demoRaceUsage is --race's help in demo.
const demoRaceUsage = "race the simulator's models instead of the dashboard: the same prompt to each at once, the text as it streams (see ttftop race)"

// demoRaceFlags are the demo's flags a race honours.
type demoRaceFlags struct {
	seed   int64
	record string // --record: the race's recording
	json   bool   // --json: race --json's document
}

// runDemoRace starts the demo simulator and races its models (precise
// token timing: the race is about timing).
func runDemoRace(ctx context.Context, f demoRaceFlags, stdout, stderr io.Writer) error {
	scfg := sim.DemoConfig()
	scfg.Seed = f.seed
	s, err := sim.New(scfg)
	if err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return errors.Join(fmt.Errorf("demo simulator: %w", err), s.Close())
	}
	prompt, err := loadProbePrompt("medium", "")
	if err != nil {
		return errors.Join(err, s.Close())
	}
	cfg := raceConfig{rounds: 1, targets: []raceTarget{{url: s.URL(), everyModel: true}}, record: f.record, json: f.json,
		opts: probe.Options{MaxTokens: demoRaceTokens, Timeout: probe.DefaultTimeout, Prompt: prompt}}
	if !isTerminal(stdout) {
		fmt.Fprintf(stderr, "ttftop demo --race: simulator on %s\n", s.URL())
	}
	return errors.Join(raceWith(ctx, cfg, stdout, stderr), s.Close())
}
