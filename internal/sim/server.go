package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Metrics formats for Config.MetricsFormat.
const (
	FormatVLLM   = "vllm"
	FormatSGLang = "sglang"
)

// Config configures a simulator. The zero value serves DefaultModels on a
// loopback port with vLLM metrics and no DCGM listener.
type Config struct {
	Listen     string // OpenAI API + /metrics address for Start; "" = 127.0.0.1:0
	DCGMListen string // dcgm-exporter style listener for Start; "" disables
	Seed       int64  // seeds jitter, answer lengths and text
	Load       int    // background client streams per model
	// PrefixCaching is vLLM's --enable-prefix-caching: a request whose
	// prompt starts with full KV blocks an earlier one computed skips
	// their prefill (identical prompts share all but the last block).
	// Off, the prefix-cache counters stay 0.
	PrefixCaching bool
	// SharedPrefixShare is the fraction (0–1) of background requests that
	// start with one of a few shared system prompts, so the prefix cache
	// has something to hit; 0 = every prompt distinct.
	SharedPrefixShare float64
	Models            []ModelSpec
	Scenario          Scenario
	MetricsFormat     string // FormatVLLM (default) or FormatSGLang
	// Clock, when set, is the wall clock for "created" fields and the
	// scenario timeline (offsets are Clock() − Clock() at New), so tests
	// can jump to any point of a scenario. Token timing always uses the
	// real monotonic clock.
	Clock    func() time.Time
	Hostname string // DCGM Hostname label; default "ttftop-sim"
	// CoarseTiming waits for steps with Go timers only, without the final
	// nanosleep and spin: tokens land up to ~1 ms late, which a demo never
	// shows, and the process uses about 2 % of a core less. While no HTTP
	// client is streaming from a model, its engine also runs its steps in
	// batches up to coarseLag late (the schedule and metrics are the same;
	// /metrics and DCGM trail by at most that), which saves most of its
	// timer wake-ups. Benchmarks and `ttftop sim` keep precise timing.
	CoarseTiming bool
	// KVConnector is vLLM's --kv-transfer-config connector of a
	// disaggregated worker ("NixlConnector"): its page then has the NIXL
	// families, the waiting reasons and the prompt tokens by source
	// (docs/disaggregated.md). Empty: an aggregated server.
	KVConnector string
}

// Server is a running simulator: engines, background load and (after
// Start) HTTP listeners.
type Server struct {
	cfg       Config
	format    string
	engines   []*engine
	byName    map[string]*engine
	gpus      []GPUInfo
	epoch     time.Time // monotonic base of all step times
	wallStart time.Time
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	sched     schedHist // token flush − step deadline
	wake      schedHist // engine wake-up − step deadline
	ids       atomic.Uint64
	handler   http.Handler
	load      *loadGen
	// kv, on a disaggregated model's decode worker, is where its prompts'
	// KV caches come from (PD); nil on an aggregated server.
	kv *kvLink
	// also are closed with the server (CloseWith).
	also []io.Closer
	// metricsSize is the length of the last /metrics answer (bytes), to
	// size the next one's buffer.
	metricsSize atomic.Int64

	mu       sync.Mutex
	servers  []*http.Server
	url      string
	dcgmURL  string
	started  bool
	shutOnce sync.Once
}

// New validates cfg and starts the engine loops and background load; the
// caller must Close the server. HTTP is available through Handler at once,
// and on real listeners after Start.
func New(cfg Config) (*Server, error) {
	if len(cfg.Models) == 0 {
		cfg.Models = DefaultModels()
	}
	if cfg.MetricsFormat == "" {
		cfg.MetricsFormat = FormatVLLM
	}
	if cfg.MetricsFormat != FormatVLLM && cfg.MetricsFormat != FormatSGLang {
		return nil, fmt.Errorf("metrics format %q: want %q or %q", cfg.MetricsFormat, FormatVLLM, FormatSGLang)
	}
	if cfg.Load < 0 {
		return nil, fmt.Errorf("load %d: must be >= 0", cfg.Load)
	}
	if cfg.SharedPrefixShare < 0 || cfg.SharedPrefixShare > 1 {
		return nil, fmt.Errorf("shared prefix share %v: must be within [0, 1]", cfg.SharedPrefixShare)
	}
	if cfg.Hostname == "" {
		cfg.Hostname = "ttftop-sim"
	}
	s := &Server{cfg: cfg, format: cfg.MetricsFormat, byName: map[string]*engine{}, epoch: time.Now()}
	s.wallStart = s.wallNow()
	names := make([]string, 0, len(cfg.Models))
	for _, m := range cfg.Models {
		spec, gpu, err := m.withDefaults()
		if err != nil {
			return nil, err
		}
		if _, dup := s.byName[spec.Name]; dup {
			return nil, fmt.Errorf("model %q listed twice", spec.Name)
		}
		var ranks []*engine
		for r := range spec.DPRanks {
			e := newEngine(s, len(s.engines), spec, gpu)
			e.rank = r
			s.engines = append(s.engines, e)
			ranks = append(ranks, e)
		}
		e := ranks[0]
		e.ranks = ranks
		s.byName[spec.Name] = e
		names = append(names, spec.Name)
	}
	for _, e := range s.engines {
		if e.rank > 0 {
			continue // the model's adapters are rank 0's
		}
		for _, a := range e.spec.Adapters {
			if _, dup := s.byName[a]; dup || strings.TrimSpace(a) == "" {
				return nil, fmt.Errorf("adapter %q of %q: empty or a name already served", a, e.spec.Name)
			}
			s.byName[a] = e
		}
	}
	if err := cfg.Scenario.validate(names); err != nil {
		return nil, err
	}
	if err := s.validateRanks(); err != nil {
		return nil, err
	}
	s.gpus = buildGPUs(s)
	s.handler = s.routes()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for _, e := range s.engines {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			e.run(s.ctx)
		}()
	}
	s.load = newLoadGen(s)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.load.supervise(s.ctx)
	}()
	return s, nil
}

// now is the monotonic step clock in ns since New.
func (s *Server) now() int64 { return int64(time.Since(s.epoch)) }

func (s *Server) wallNow() time.Time {
	if s.cfg.Clock != nil {
		return s.cfg.Clock()
	}
	return time.Now()
}

// Elapsed is the scenario offset: time since New on the configured clock.
func (s *Server) Elapsed() time.Duration {
	if s.cfg.Clock != nil {
		return s.cfg.Clock().Sub(s.wallStart)
	}
	return time.Since(s.epoch)
}

// effects are the model's: those of events for all its ranks.
func (s *Server) effects(model string) effects {
	return s.cfg.Scenario.effectsAt(model, -1, s.Elapsed())
}

// rankEffects are engine e's: its model's and its rank's.
func (s *Server) rankEffects(e *engine) effects {
	return s.cfg.Scenario.effectsAt(e.spec.Name, e.rank, s.Elapsed())
}

// Handler serves the OpenAI API and /metrics (for httptest or embedding).
func (s *Server) Handler() http.Handler { return s.handler }

// DCGMHandler serves the dcgm-exporter style /metrics.
func (s *Server) DCGMHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", s.serveDCGM)
	return mux
}

// Start binds the listeners (":0" friendly; see URL and DCGMURL) and
// serves in the background until ctx ends or Close is called.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("sim: already started")
	}
	if s.ctx.Err() != nil {
		return ErrClosed
	}
	addr := s.cfg.Listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	lns := []net.Listener{ln}
	handlers := []http.Handler{s.handler}
	if s.cfg.DCGMListen != "" {
		dln, err := net.Listen("tcp", s.cfg.DCGMListen)
		if err != nil {
			ln.Close()
			return err
		}
		lns = append(lns, dln)
		handlers = append(handlers, s.DCGMHandler())
		s.dcgmURL = "http://" + dln.Addr().String()
	}
	s.url = "http://" + ln.Addr().String()
	s.started = true
	for i, l := range lns {
		hs := &http.Server{Handler: handlers[i], ReadHeaderTimeout: 10 * time.Second}
		s.servers = append(s.servers, hs)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			hs.Serve(l)
		}()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-ctx.Done():
			s.shutdown()
		case <-s.ctx.Done():
		}
	}()
	return nil
}

// URL is the base URL of the API listener ("" before Start).
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// DCGMURL is the base URL of the DCGM listener ("" if disabled).
func (s *Server) DCGMURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dcgmURL
}

// shutdown stops engines (failing in-flight requests so handlers return),
// then the listeners, without waiting for goroutines.
func (s *Server) shutdown() {
	s.shutOnce.Do(func() {
		s.cancel()
		s.mu.Lock()
		servers := s.servers
		s.mu.Unlock()
		for _, hs := range servers {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if hs.Shutdown(ctx) != nil {
				hs.Close()
			}
			cancel()
		}
	})
}

// Close stops engine loops, load and listeners and waits for all of the
// server's goroutines (stream handlers end when their request fails).
func (s *Server) Close() error {
	s.shutdown()
	s.wg.Wait()
	s.mu.Lock()
	also := s.also
	s.also = nil
	s.mu.Unlock()
	var errs []error
	for _, c := range also {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// CloseWith has Close close c too (a deployment started beside the
// server, as the demo's disaggregated model).
func (s *Server) CloseWith(c io.Closer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.also = append(s.also, c)
}

// Models returns the served model specs with defaults applied.
func (s *Server) Models() []ModelSpec {
	out := make([]ModelSpec, 0, len(s.engines))
	for _, e := range s.engines {
		if e.rank == 0 {
			out = append(out, e.spec)
		}
	}
	return out
}

// ScheduleErrors reports the token schedule error distribution (see
// ScheduleStats) since start or the last ResetScheduleErrors.
func (s *Server) ScheduleErrors() ScheduleStats { return s.sched.stats() }

// StepWakeErrors reports how late engine loops woke for their step
// deadlines: the scheduler's own precision, before any fan-out to streams
// (precise timing only: a CoarseTiming engine is late on purpose).
func (s *Server) StepWakeErrors() ScheduleStats { return s.wake.stats() }

// ResetScheduleErrors clears both schedule histograms (e.g. after a
// benchmark's warm-up).
func (s *Server) ResetScheduleErrors() {
	s.sched.reset()
	s.wake.reset()
}

func (s *Server) engineFor(name string) (*engine, error) {
	if name == "" {
		return s.engines[0].pickRank(), nil
	}
	if e, ok := s.byName[name]; ok {
		return e.pickRank(), nil
	}
	return nil, ErrUnknownModel
}
