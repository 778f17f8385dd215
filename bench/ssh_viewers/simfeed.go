//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/probe"
)

// simModels are n 8B models on H100s (TPOT ≈ 7 ms, so a 32-token probe
// takes ≈ 0.25 s and each endpoint is probed about once a second).
func simModels(n int) []sim.ModelSpec {
	models := make([]sim.ModelSpec, n)
	for i := range models {
		models[i] = sim.ModelSpec{Name: fmt.Sprintf("org/model-%02d", i), Params: 8.03e9, GPU: "H100 SXM", Jitter: 0.02}
	}
	return models
}

// runSimulator serves n simulated models (child mode) and prints the URL;
// it stops when stdin closes. Its CPU is not the server's.
func runSimulator(n int) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := sim.New(sim.Config{Listen: "127.0.0.1:0", Seed: 1, Models: simModels(n)})
	if err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	fmt.Println(s.URL())
	werr := waitStdin()
	cancel()
	if err := s.Close(); werr == nil {
		werr = err
	}
	return werr
}

// startSimulator runs the simulator child and returns its URL and a stop.
func startSimulator(n int) (string, func() error, error) {
	cmd := exec.Command(os.Args[0], "-simulate", strconv.Itoa(n))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() error {
		if err := stdin.Close(); err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, stdout); err != nil {
			return err
		}
		return cmd.Wait()
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return "", nil, errorsJoin(fmt.Errorf("simulator: %w", err), stop())
	}
	return strings.TrimSpace(line), stop, nil
}

// addSimSources points the monitor at the simulator as `ttftop serve`
// would: each model probed every second (32 tokens) and /metrics scraped.
func addSimSources(m *monitor.Monitor, url string, n int) error {
	c := &config.Config{}
	for _, md := range simModels(n) {
		c.Endpoints = append(c.Endpoints, config.Endpoint{URL: url, Model: md.Name,
			Probe: &probe.Settings{Interval: slo.Duration(time.Second), MaxTokens: 32, Prompt: "short"}})
	}
	if err := c.Complete(); err != nil {
		return err
	}
	return m.AddConfig(c)
}
