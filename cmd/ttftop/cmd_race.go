package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/pflag"
	"github.com/ttftop/ttftop/internal/race"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/tui/raceview"
)

const raceSummary = "race endpoints side by side: the same prompt to each at once, the text as it streams"

func raceCommand() command {
	return command{name: "race", summary: raceSummary, usage: raceUsage, bind: parsed(parseRaceArgs, raceWith)}
}

const raceUsage = `ttftop race TARGET TARGET... [flags]
       ttftop race URL                    (every model the server lists)
       ttftop race URL MODEL MODEL...     (models of one server)

` + raceSummary + `.
A TARGET is a URL (server root, /v1 base or full endpoint path, any --api
the probe speaks) or a model name, which races that model of the URL
before it. One connection per racer is opened first, then every request is
released at once; the screen says how far apart they really started.

In a terminal each racer gets a column (a band, one above the other, when
the terminal is narrow): its text appears as each chunk arrives, reasoning
dimmed, tool calls marked, with the elapsed time, TTFT (● when the first
token lands), tokens so far, tok/s over the last second and TPOT so far;
at the end the finish order and each racer's TTFT, TPOT and E2E with its
difference from the winner. space races again with the same prompt.
Without a terminal it prints each round's result as text; --json prints
one document with every round and racer.

--rounds N races N times; after the last round it sums up: each racer's
wins and medians, and for each racer against the first the differences of
the A/B comparison of 'ttftop probe A B' (with confidence intervals from
5 rounds on).

Figures are the probe's (client side; definitions: ttftop probe --help).`

// raceConfig is what the flags say.
type raceConfig struct {
	opts    probe.Options
	targets []raceTarget
	rounds  int
	json    bool
	record  string // --record: the race's recording, for replay
}

// raceTarget is one racer as the command line names it: a URL and,
// maybe, a model of it ("" = --model or discovered).
type raceTarget struct {
	url, model string
	everyModel bool // a lone URL: race every model it lists
}

func parseRaceArgs(fs *pflag.FlagSet) func(positional []string) (raceConfig, error) {
	var cfg raceConfig
	var req requestFlags
	req.bind(fs)
	var prompt, promptFile string
	fs.StringVar(&prompt, "prompt", probe.DefaultPrompt, "built-in prompt (short, medium, long) or the prompt text")
	fs.StringVar(&promptFile, "prompt-file", "", "read the prompt from this file")
	fs.IntVar(&cfg.rounds, "rounds", 1, "races to run; more than one: a summary with medians and A/B differences (intervals from 5)")
	fs.BoolVar(&cfg.json, "json", false, jsonUsage)
	bindRecord(fs, &cfg.record)
	return func(positional []string) (raceConfig, error) {
		var err error
		if err = req.validate(); err != nil {
			return cfg, err
		}
		if cfg.opts, err = req.options(); err != nil {
			return cfg, err
		}
		if cfg.rounds < 1 {
			return cfg, usagef("--rounds must be at least 1")
		}
		if cfg.targets, err = raceTargets(positional, req.model); err != nil {
			return cfg, err
		}
		if cfg.opts.Prompt, err = loadProbePrompt(prompt, promptFile); err != nil {
			return cfg, usageError{msg: err.Error()}
		}
		return cfg, nil
	}
}

// raceTargets reads the positional arguments: URLs, each followed by the
// models of it to race.
func raceTargets(args []string, model string) ([]raceTarget, error) {
	if len(args) == 0 {
		return nil, usagef("give two targets to race: URLs, or a URL and its models")
	}
	var ts []raceTarget
	url, urlModels := "", 0
	closeURL := func() {
		if url != "" && urlModels == 0 {
			ts = append(ts, raceTarget{url: url, model: model})
		}
	}
	for _, a := range args {
		if looksLikeURL(a) {
			closeURL()
			url, urlModels = a, 0
			continue
		}
		if url == "" {
			return nil, usagef("%q: a model name follows the URL of its server", a)
		}
		ts = append(ts, raceTarget{url: url, model: a})
		urlModels++
	}
	closeURL()
	if len(ts) == 1 && ts[0].model == "" {
		ts[0].everyModel = true
	} else if len(ts) < 2 {
		return nil, usagef("a race needs two racers: give two targets, or a URL without --model to race its models")
	}
	return ts, nil
}

// maxRacers bounds the racers of a lone URL's model list: beyond it the
// lanes are too narrow to read.
const maxRacers = 8

// raceProbers prepares one prober per racer and discovers the models not
// given. The caller closes them, also on error.
func raceProbers(ctx context.Context, cfg raceConfig, note func(string, ...any)) ([]*probe.Prober, error) {
	var ps []*probe.Prober
	add := func(url, model string) (*probe.Prober, []probe.Model, error) {
		o := cfg.opts
		o.URL, o.Model = url, model
		p, err := probe.New(o)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", url, err)
		}
		ps = append(ps, p)
		dctx, cancel := context.WithTimeout(ctx, p.Options().Timeout)
		defer cancel()
		models, err := p.Discover(dctx)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", url, err)
		}
		return p, models, nil
	}
	for _, t := range cfg.targets {
		if !t.everyModel {
			if _, _, err := add(t.url, t.model); err != nil {
				return ps, err
			}
			continue
		}
		first, models, err := add(t.url, "")
		if err != nil {
			return ps, err
		}
		if len(models) < 2 {
			return ps, fmt.Errorf("%s serves one model (%s): a race needs two racers; give another target", t.url, first.Model())
		}
		if len(models) > maxRacers {
			note("%s lists %d models; racing the first %d\n", t.url, len(models), maxRacers)
			models = models[:maxRacers]
		}
		for _, m := range models[1:] {
			if _, _, err := add(t.url, m.ID); err != nil {
				return ps, err
			}
		}
	}
	return ps, nil
}

// racerName is what a lane shows: host/model.
func racerName(p *probe.Prober) string { return p.Host() + "/" + p.Model() }

// raceWith runs the race cfg describes: live in a terminal, else as text
// or --json.
func raceWith(ctx context.Context, cfg raceConfig, stdout, stderr io.Writer) (err error) {
	var notes error
	note := func(format string, a ...any) {
		_, err := fmt.Fprintf(stderr, format, a...)
		notes = errors.Join(notes, err)
	}
	if cfg.opts.Auth.Insecure {
		note("WARNING: TLS certificate verification is OFF (--insecure): the endpoints are not authenticated\n")
	}
	probers, err := raceProbers(ctx, cfg, note)
	var rounds []race.Round
	defer func() {
		for _, p := range probers {
			p.Close()
		}
	}()
	if err != nil {
		return err
	}
	record := func(tea.Msg) {}
	if cfg.record != "" {
		rec, rerr := newRaceRecorder(cfg.record, raceTitle(cfg.opts.MaxTokens, cfg.opts.Prompt), raceLanes(probers))
		if rerr != nil {
			return rerr
		}
		defer func() { err = errors.Join(err, rec.Close()) }()
		record = rec.Record
	}
	switch {
	case cfg.json:
		rounds = raceRounds(ctx, probers, cfg.rounds, record, nil)
		err = writeRaceJSON(stdout, cfg, probers, rounds)
	case isTerminal(stdout):
		rounds, err = raceInTerminal(ctx, cfg, probers, stdout, record)
	default:
		rounds = raceRounds(ctx, probers, cfg.rounds, record, func(i int, rd race.Round) error {
			err = writeRaceRound(stdout, probers, i, rd)
			return err
		})
		if err == nil && cfg.rounds > 1 {
			err = writeRaceSummary(stdout, probers, rounds)
		}
	}
	if err = errors.Join(err, notes); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return raceFailures(probers, rounds)
}

// raceRounds runs n rounds, telling send what the race view would be
// told (the recording), and calling after (when not nil) at the end of
// each; it stops early when ctx ends or after fails.
func raceRounds(ctx context.Context, probers []*probe.Prober, n int, send func(tea.Msg), after func(int, race.Round) error) []race.Round {
	var rounds []race.Round
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		send(raceview.Started{Round: i + 1})
		rd := race.Run(ctx, probers, viewHooks(send))
		send(raceview.Ended{Round: i + 1, StartSkew: rd.StartSkew, Positions: rd.Positions})
		rounds = append(rounds, rd)
		if after != nil && after(i, rd) != nil {
			break
		}
	}
	return rounds
}

// raceFailures fails the command when a racer never finished a stream
// in the rounds run: a script must know the race was not run in full.
func raceFailures(probers []*probe.Prober, rounds []race.Round) error {
	if len(rounds) == 0 {
		return nil // quit before a round ended
	}
	var failed []string
	for i, p := range probers {
		ok := 0
		for _, rd := range rounds {
			if rd.Results[i].OK {
				ok++
			}
		}
		if ok == 0 {
			failed = append(failed, abLabel(i)+" ("+racerName(p)+")")
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("every request failed for %s", strings.Join(failed, ", "))
	}
	return nil
}
