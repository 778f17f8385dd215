package promql

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// Source queries a Prometheus-compatible HTTP API and feeds the sink.
type Source struct {
	cfg   Config
	sink  telemetry.Sink
	api   promAPI
	http  *http.Client
	creds credentials
	id    string // Observation.Source: "promql:<redacted url>"
	url   string // redacted
	base  *url.URL
	// fams are every family of the alias table; gen writes their queries.
	fams   []*family
	gen    generator
	match  string // the metric-name listing's match[] selector
	expand expander
	now    func() time.Time

	// view is the window on screen (WindowChanged); wake starts a refresh
	// at once when it widens.
	view    atomic.Int64
	viewGen atomic.Int64 // counts widenings
	wake    chan struct{}

	mu    sync.Mutex // serialises refreshes; guards the state below
	state state

	flight inFlight // the refresh in progress, for a store that hangs
}

// state is what persists between refreshes.
type state struct {
	reg        *registry
	lastEnd    map[telemetry.Signal]time.Time // newest histogram step fetched
	cum        map[cumKey]cumPoint            // last point per endpoint and signal: its frontier
	judged     map[cumKey]time.Time           // newest step reported as no data
	offset     clockOffset
	failures   int
	lastOK     time.Time
	recognised []string
	discovered time.Time // when families were last listed
	// active are the families found in the store (all of them until a
	// listing succeeds); queries are theirs, with Config.Queries applied.
	active  []*family
	gpu     bool // DCGM series found (or not yet listed)
	queries querySet

	// History of the viewed window (backfill.go): per endpoint and signal
	// the oldest point whose later windows were emitted, and how far back
	// history was asked for; series counts size the history step.
	oldest    map[cumKey]cumPoint
	asked     map[cumKey]time.Time
	series    map[telemetry.Signal]int
	histRetry map[telemetry.Signal]time.Time // history not due before, unless widened
	histGen   map[telemetry.Signal]int64     // viewGen when history was last asked
	hist      historyStatus
	ages      ageBook      // young.go
	rates     rateKind     // young.go: whether young series read low
	values    valueHistory // samplehistory.go
	targets   targetsBook  // targets.go
}

// New validates cfg (zero fields take DefaultConfig values) and returns a
// source that writes to sink. It does no I/O besides reading the CA file.
func New(cfg Config, sink telemetry.Sink) (*Source, error) {
	if sink == nil {
		return nil, errors.New("promql: nil sink")
	}
	cfg = cfg.withDefaults()
	base, err := cfg.validate()
	if err != nil {
		return nil, fmt.Errorf("promql: %w", err)
	}
	creds := credentials{bearer: cfg.HTTP.BearerToken, headers: cfg.HTTP.Headers, basic: cfg.Basic, userAgent: cfg.HTTP.UserAgent}
	hc, err := newHTTPClient(base, cfg.HTTP, creds)
	if err != nil {
		return nil, fmt.Errorf("promql: %w", err)
	}
	a, err := newAPI(base, hc)
	if err != nil {
		return nil, fmt.Errorf("promql: %w", err)
	}
	fams := allFamilies()
	s := &Source{
		cfg:    cfg,
		sink:   sink,
		api:    newFastAPI(a, hc, base, cfg.HTTP.Timeout*9/10),
		http:   hc,
		creds:  creds,
		url:    base.Redacted(),
		base:   base,
		fams:   fams,
		gen:    newGenerator(cfg.GroupBy, cfg.ReplicaLabels, cfg.RoleLabels),
		match:  discoveryMatch(fams),
		expand: newExpander(cfg.Window, cfg.HistogramStep, cfg.Quantile, cfg.GroupBy),
		now:    time.Now,
		state: state{
			reg:     newRegistry(cfg.MaxEndpoints, newParser(fams, cfg)),
			lastEnd: map[telemetry.Signal]time.Time{},
			cum:     map[cumKey]cumPoint{},
			judged:  map[cumKey]time.Time{},

			oldest:    map[cumKey]cumPoint{},
			asked:     map[cumKey]time.Time{},
			series:    map[telemetry.Signal]int{},
			histRetry: map[telemetry.Signal]time.Time{},
			histGen:   map[telemetry.Signal]int64{},
			ages:      ageBook{},
			values:    newValueHistory(),
		},
		wake: make(chan struct{}, 1),
	}
	s.id = telemetry.SourcePromQL.At(s.url)
	s.activate(fams, true)
	return s, nil
}

// activate makes the queries those of fams (the families found in the
// store; the GPU query only with gpu), with Config.Queries replacing a signal's default queries.
func (s *Source) activate(fams []*family, gpu bool) {
	st := &s.state
	st.active, st.gpu = fams, gpu
	st.queries = s.gen.generate(fams)
	if !gpu {
		delete(st.queries.value, telemetry.GPUMemBW)
		delete(st.queries.value, telemetry.GPUPower)
	}
	for sig, q := range s.cfg.Queries {
		delete(st.queries.hist, sig)
		delete(st.queries.value, sig)
		if sig.Info().Distribution {
			st.queries.hist[sig] = []string{q}
		} else {
			st.queries.value[sig] = []string{q}
		}
	}
	if s.cfg.FreshnessQuery != "" {
		st.queries.fresh = []string{s.cfg.FreshnessQuery}
	}
	if !needsKV(s.cfg.MBU) {
		st.queries.kv = nil
	}
}

func newParser(fams []*family, cfg Config) parser {
	g := newGenerator(cfg.GroupBy, cfg.ReplicaLabels, cfg.RoleLabels)
	return parser{fams: indexFamilies(fams), groupBy: cfg.GroupBy, replicas: g.replicas, roles: cfg.RoleLabels, models: cfg.Models}
}

// Config returns the effective configuration, defaults filled in.
func (s *Source) Config() Config { return s.cfg }

// Run refreshes at once and then every Config.Refresh until ctx is done,
// and returns nil then. Refresh problems are not returned: they reach the
// sink as failures and as the source status.
func (s *Source) Run(ctx context.Context) error {
	defer s.Close()
	t := time.NewTicker(s.cfg.Refresh)
	defer t.Stop()
	for {
		// Errors have reached the sink as failures and source status.
		_ = s.refresh(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-s.wake: // the viewed window widened: fill it now
		}
	}
}

// Close releases idle connections; the source stays usable.
func (s *Source) Close() { s.http.CloseIdleConnections() }

// RefreshOnce runs one refresh: it queries, emits observations and the
// source status, and returns the query errors (nil when all succeeded).
func (s *Source) RefreshOnce(ctx context.Context) error {
	return s.refresh(ctx)
}
