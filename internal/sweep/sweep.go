package sweep

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// Defaults of Config.
const (
	DefaultMinRequests = 20
	DefaultMaxStepTime = time.Minute
	DefaultTolerance   = 0.10
	DefaultStopFactor  = 2.0
)

// StartsPerStreamPerMinute is the sweep's own start-rate ceiling per
// request in flight: one start every 100 ms per slot. A closed loop of c
// streams starts a request only when one ends, so against an LLM (whose
// answers take longer than 100 ms) the rate ceiling never binds and c
// alone bounds the load; it binds only against a server that answers
// faster, e.g. one failing fast, which it then holds to 10 c requests/s.
const StartsPerStreamPerMinute = 600

// DefaultMaxPerMinute is the start-rate ceiling of a sweep to maxConc when
// none is given: 600 starts a minute per stream (a request every 100 ms),
// at least the probe's default and at most probe.AbsoluteMaxPerMinute.
// The probe's own default (600 a minute) would hold a closed loop of 8
// streams of 0.5 s requests to 5 in flight.
func DefaultMaxPerMinute(maxConc int) int {
	return min(probe.AbsoluteMaxPerMinute, max(probe.DefaultLimits().MaxPerMinute, maxConc*StartsPerStreamPerMinute))
}

// Config says what to sweep and how.
type Config struct {
	// Probe is the request every step sends (URL, model, prompt, auth,
	// ceilings). Its Concurrency is set per step; its Limits are the
	// safety ceilings and must allow MaxConcurrency. Zero limits are the
	// sweep's defaults: MaxConcurrency in flight, DefaultMaxPerMinute
	// starts a minute.
	Probe probe.Options
	// MaxConcurrency is the last step: 1, 2, 4, … up to it (itself
	// included when it is not a power of two).
	MaxConcurrency int
	// Objectives judge each step; the knee is where they last hold.
	Objectives []slo.Objective
	// MinRequests judged per step before it may be stable.
	MinRequests int
	// MaxStepTime ends a step that does not settle.
	MaxStepTime time.Duration
	// Tolerance is the relative p95 change under which a step is stable.
	Tolerance float64
	// StopFactor: stop once an objective is exceeded this many times over.
	StopFactor float64
	// Progress, when set, is called (from the sweep's goroutines, never
	// concurrently) at every check of the running step and after each step.
	Progress func(Progress)
}

// Progress is the sweep so far.
type Progress struct {
	Steps   []Step // finished steps
	Current *Step  // the step being measured, figures so far; nil between steps
}

// Report is the outcome of a sweep.
type Report struct {
	URL      string           `json:"url"`
	Model    string           `json:"model"`
	Engine   telemetry.Engine `json:"engine,omitempty"`
	Endpoint string           `json:"endpoint"`
	Source   string           `json:"source"` // whose figures these are
	// Limits are the safety ceilings the sweep ran under.
	Limits probe.Limits `json:"limits"`
	Steps  []Step       `json:"steps"`
	Knee   *Knee        `json:"knee"` // null when concurrency 1 already misses an objective
	Stop   string       `json:"stop"` // why the sweep ended
	// HeldBack is the step a ceiling kept below 90 % of its concurrency,
	// which ended the sweep short of MaxConcurrency; null when none did.
	HeldBack *HeldBack `json:"held_back"`
}

// HeldBack says which step could not keep its concurrency in flight, and
// what held it back.
type HeldBack struct {
	Concurrency int     `json:"concurrency"`
	InFlight    float64 `json:"in_flight"`
	By          Holder  `json:"by"`
}

// Knee is the highest concurrency meeting every objective.
type Knee struct {
	Concurrency int      `json:"concurrency"`
	TTFTp95ms   *float64 `json:"ttft_p95_ms"`
	TPOTp95ms   *float64 `json:"tpot_p95_ms"`
	OutputTPS   *float64 `json:"output_tokens_per_s"`
	Goodput     *float64 `json:"goodput_ratio"`

	tpot []float64 // the knee step's TPOTs in seconds
}

func (c Config) withDefaults() Config {
	if c.MinRequests == 0 {
		c.MinRequests = DefaultMinRequests
	}
	if c.MaxStepTime == 0 {
		c.MaxStepTime = DefaultMaxStepTime
	}
	if c.Tolerance == 0 {
		c.Tolerance = DefaultTolerance
	}
	if c.StopFactor == 0 {
		c.StopFactor = DefaultStopFactor
	}
	if c.Probe.Limits.MaxConcurrency == 0 {
		c.Probe.Limits.MaxConcurrency = c.MaxConcurrency
	}
	if c.Probe.Limits.MaxPerMinute == 0 {
		c.Probe.Limits.MaxPerMinute = DefaultMaxPerMinute(c.MaxConcurrency)
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.MaxConcurrency < 1:
		return errors.New("max concurrency must be at least 1")
	case c.MinRequests < 1:
		return errors.New("min requests must be at least 1")
	case c.MaxStepTime < time.Second:
		return errors.New("max step time must be at least 1s")
	case !(c.Tolerance > 0 && c.Tolerance < 1):
		return errors.New("tolerance must be within (0, 1)")
	case !(c.StopFactor >= 1):
		return errors.New("stop factor must be at least 1")
	}
	return nil
}

// Levels are the concurrencies of a sweep up to max: powers of two, then
// max itself.
func Levels(maxConc int) []int {
	var out []int
	for c := 1; c <= maxConc; c *= 2 {
		out = append(out, c)
	}
	if len(out) == 0 || out[len(out)-1] != maxConc {
		out = append(out, maxConc)
	}
	return out
}

// Run sweeps. It returns an error when it could not start (bad options,
// the ceilings refuse MaxConcurrency, discovery failed); an interrupted
// sweep (ctx done) returns what it measured, with Stop "interrupted".
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	opts := cfg.Probe
	opts.Concurrency = cfg.MaxConcurrency // the ceilings must allow the last step
	opts.Interval = 0                     // closed loop: back to back
	p, err := probe.New(opts)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, p.Options().Timeout)
	_, err = p.Discover(dctx)
	cancel()
	p.Close()
	if err != nil {
		return nil, err
	}
	ep := p.Endpoint()
	opts.Model = p.Model()
	rep := &Report{URL: p.URL(), Model: p.Model(), Engine: ep.Engine, Endpoint: ep.Name,
		Source: "client (ttftop probe requests)", Limits: p.Options().Limits}
	bounds := slo.BoundsFor(cfg.Objectives, ep.Name)
	var objs []slo.Objective
	for _, o := range cfg.Objectives {
		if o.Matches(ep.Name) {
			objs = append(objs, o)
		}
	}
	for _, c := range Levels(cfg.MaxConcurrency) {
		opts.Concurrency = c
		m := &stepRun{cfg: cfg, c: c, bounds: bounds, objs: objs, done: rep.Steps}
		st, err := m.measure(ctx, opts)
		if err != nil {
			return nil, err
		}
		if st.Requests == 0 && ctx.Err() != nil {
			rep.Stop = "interrupted"
			break
		}
		rep.Steps = append(rep.Steps, st)
		if cfg.Progress != nil {
			cfg.Progress(Progress{Steps: rep.Steps})
		}
		if ctx.Err() != nil {
			rep.Stop = "interrupted"
			break
		}
		if reason, held := stopAfter(rep.Steps, cfg, rep.Limits); reason != "" {
			rep.Stop, rep.HeldBack = reason, held
			break
		}
	}
	if rep.Stop == "" {
		rep.Stop = fmt.Sprintf("reached the maximum concurrency %d", cfg.MaxConcurrency)
	}
	rep.Knee = kneeOf(rep.Steps)
	return rep, nil
}

// kneeOf is the last step of the leading run of steps that ran at their
// concurrency (at least 90 % of it in flight) and met every objective: a
// step a ceiling held back did not carry the load it is named after.
func kneeOf(steps []Step) *Knee {
	var k *Knee
	for _, s := range steps {
		if !s.MeetsObjectives || s.Throttled() {
			break
		}
		k = &Knee{Concurrency: s.Concurrency, TTFTp95ms: s.TTFTp95ms, TPOTp95ms: s.TPOTp95ms,
			OutputTPS: s.OutputTPS, Goodput: s.Goodput, tpot: s.tpot}
	}
	return k
}
