package sweep

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tokentop/tokentop/slo"
	"github.com/tokentop/tokentop/sources/probe"
	"github.com/tokentop/tokentop/telemetry"
)

// Defaults of Config.
const (
	DefaultMinRequests = 20
	DefaultMaxStepTime = time.Minute
	DefaultTolerance   = 0.10
	DefaultStopFactor  = 2.0
)

// Config says what to sweep and how.
type Config struct {
	// Probe is the request every step sends (URL, model, prompt, auth,
	// ceilings). Its Concurrency is set per step; its Limits are the
	// safety ceilings and must allow MaxConcurrency.
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
	Steps    []Step           `json:"steps"`
	Knee     *Knee            `json:"knee"` // null when concurrency 1 already misses an objective
	Stop     string           `json:"stop"` // why the sweep ended
}

// Knee is the highest concurrency meeting every objective.
type Knee struct {
	Concurrency int      `json:"concurrency"`
	TTFTp95ms   *float64 `json:"ttft_p95_ms"`
	TPOTp95ms   *float64 `json:"tpot_p95_ms"`
	OutputTPS   *float64 `json:"output_tps"`
	Goodput     *float64 `json:"goodput"`
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
		Source: "client (tokentop probe requests)"}
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
		if reason := stopReason(rep.Steps, cfg.StopFactor); reason != "" {
			rep.Stop = reason
			break
		}
	}
	if rep.Stop == "" {
		rep.Stop = fmt.Sprintf("reached the maximum concurrency %d", cfg.MaxConcurrency)
	}
	rep.Knee = kneeOf(rep.Steps)
	return rep, nil
}

// kneeOf is the last step of the leading run of steps meeting every
// objective.
func kneeOf(steps []Step) *Knee {
	var k *Knee
	for _, s := range steps {
		if !s.MeetsObjectives {
			break
		}
		k = &Knee{Concurrency: s.Concurrency, TTFTp95ms: s.TTFTp95ms, TPOTp95ms: s.TPOTp95ms,
			OutputTPS: s.OutputTPS, Goodput: s.Goodput}
	}
	return k
}
