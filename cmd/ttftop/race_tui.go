package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/internal/race"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/tui/raceview"
)

// raceFPS caps the frames per second: a chunk is drawn at most 1/raceFPS
// after it arrived (never held back longer, never replayed), and over SSH
// the frames' cursor moves stay small.
const raceFPS = 30

// raceInTerminal shows the race live until the user quits; space races
// again with the same prompt. It returns every round run.
func raceInTerminal(ctx context.Context, cfg raceConfig, probers []*probe.Prober, stdout io.Writer, record func(tea.Msg)) ([]race.Round, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	again := make(chan struct{}, 1)
	view := raceview.New(raceview.Options{
		Lanes:  raceLanes(probers),
		Title:  raceTitle(cfg.opts.MaxTokens, cfg.opts.Prompt),
		Rounds: cfg.rounds,
		Again: func() {
			select {
			case again <- struct{}{}:
			default:
			}
		},
	})
	prog := tea.NewProgram(view, tea.WithContext(ctx), tea.WithOutput(stdout), tea.WithFPS(raceFPS))
	var (
		mu   sync.Mutex
		all  []race.Round
		werr error
	)
	send := func(m tea.Msg) {
		record(m)
		prog.Send(m)
	}
	hooks := viewHooks(send)
	done := make(chan struct{})
	go func() {
		defer close(done)
		round := 0
		for {
			var set []race.Round
			for range cfg.rounds {
				if ctx.Err() != nil {
					return
				}
				round++
				send(raceview.Started{Round: round})
				rd := race.Run(ctx, probers, hooks)
				if ctx.Err() != nil {
					return // quit mid-round: not a round run
				}
				send(raceview.Ended{Round: round, StartSkew: rd.StartSkew, Positions: rd.Positions})
				set = append(set, rd)
			}
			mu.Lock()
			all = append(all, set...)
			mu.Unlock()
			if len(set) > 1 {
				text, err := raceSummaryText(probers, set)
				if err != nil {
					mu.Lock()
					werr = err
					mu.Unlock()
				}
				send(raceview.Summary{Text: text})
			}
			select {
			case <-again:
			case <-ctx.Done():
				return
			}
		}
	}()
	_, err := prog.Run()
	cancel()
	<-done
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil // cancelled from outside (a signal): a normal end
	}
	mu.Lock()
	defer mu.Unlock()
	return all, errors.Join(err, werr)
}

// viewHooks tell send each chunk and result as the race view draws it.
func viewHooks(send func(tea.Msg)) race.Hooks {
	return race.Hooks{
		Chunk: func(c race.Chunk) { send(chunkOf(c)) },
		Done:  func(i int, r *probe.Result) { send(finishedOf(i, r)) },
	}
}

// raceTitle says what is raced.
func raceTitle(maxTokens int, prompt string) string {
	p := strings.Join(strings.Fields(prompt), " ")
	return fmt.Sprintf("· max %d tokens · prompt %q", maxTokens, p)
}
