package sim

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Role labels of a disaggregated deployment's pods, as llm-d's pods carry
// them (llm-d.ai/role), and the Prometheus label a pod label becomes
// under Kubernetes service discovery's usual relabelling.
const (
	RolePrefill     = "prefill"
	RoleDecode      = "decode"
	RoleLabel       = "llm-d.ai/role"
	RolePromLabel   = "llm_d_ai_role"
	nixlConnector   = "NixlConnector"
	defaultKVSetup  = 2 * time.Millisecond
	defaultTTFTGoal = time.Second
	defaultTPOTGoal = 50 * time.Millisecond
)

// DefaultKVBandwidth is a KV transfer's bytes/s when PDConfig gives
// none: a 100 Gb/s RDMA link at 80 %.
const DefaultKVBandwidth = 10e9

// ErrNoPrefill: no prefill worker of a disaggregated model is up (the
// decode worker cannot start a request).
var ErrNoPrefill = errors.New("sim: no prefill worker ready")

// PDConfig is a disaggregated (P/D) deployment of one model: a prefill
// pool and a decode pool of vLLM workers with the NIXL connector and the
// llm-d router in front. A request reaches the router, which picks a
// decode worker; that worker has a prefill worker compute the prompt
// (max_tokens 1, as llm-d's routing sidecar asks), pulls the KV cache
// over the link and decodes. So the user's TTFT is the prefill worker's
// TTFT (its queue and prefill) + the transfer + the decode worker's wait
// for its first step.
type PDConfig struct {
	Model           ModelSpec
	Prefill, Decode int   // replicas per pool; default 1 each
	Seed            int64 // seeds every worker (each its own stream)
	Load            int   // client streams through the router
	// KVBandwidth is the bytes/s one transfer gets (default 10 GB/s);
	// KVSetup the fixed cost of each (default 2 ms). A transfer of a
	// prompt takes KVSetup + prompt × KVBytesPerToken / KVBandwidth,
	// times a kv_transfer_slow event's factor.
	KVBandwidth float64
	KVSetup     time.Duration
	// TTFTGoal and TPOTGoal are the router's objectives: requests over
	// them count in its SLO-violation counters (defaults 1 s and 50 ms).
	TTFTGoal, TPOTGoal time.Duration
	// Pool names the InferencePool (default "<model>-pool").
	Pool string
	// Listen is the router's address for Start ("" = a free loopback
	// port); WorkerListen the workers', prefill first (missing or "" =
	// a free loopback port each).
	Listen            string
	WorkerListen      []string
	Scenario          Scenario
	Clock             func() time.Time
	CoarseTiming      bool
	PrefixCaching     bool
	SharedPrefixShare float64
}

// PD is a running disaggregated deployment: its workers (each a Server of
// its own, a Prometheus target of its own) and its router.
type PD struct {
	cfg             PDConfig
	prefill, decode []*Server
	router          *Router
	ctx             context.Context
	cancel          context.CancelFunc
	load            *routerLoad
}

// kvLink is how a decode worker gets a prompt's KV cache.
type kvLink struct {
	pick      func() *Server // a ready prefill worker, nil when none
	bandwidth float64
	setup     time.Duration
}

// NewPD starts the workers, the router and its load; Close stops them.
func NewPD(cfg PDConfig) (*PD, error) {
	cfg.Prefill, cfg.Decode = max(cfg.Prefill, 1), max(cfg.Decode, 1)
	if cfg.KVBandwidth <= 0 {
		cfg.KVBandwidth = DefaultKVBandwidth
	}
	if cfg.KVSetup <= 0 {
		cfg.KVSetup = defaultKVSetup
	}
	if cfg.TTFTGoal <= 0 {
		cfg.TTFTGoal = defaultTTFTGoal
	}
	if cfg.TPOTGoal <= 0 {
		cfg.TPOTGoal = defaultTPOTGoal
	}
	if cfg.Pool == "" {
		cfg.Pool = PodName(cfg.Model.Name) + "-pool"
	}
	if cfg.Load < 0 {
		return nil, fmt.Errorf("load %d: must be >= 0", cfg.Load)
	}
	p := &PD{cfg: cfg}
	worker := func(i int) Config {
		listen := ""
		if i < len(cfg.WorkerListen) {
			listen = cfg.WorkerListen[i]
		}
		return Config{Listen: listen, Seed: cfg.Seed + int64(i), Models: []ModelSpec{cfg.Model}, Scenario: cfg.Scenario,
			Clock: cfg.Clock, CoarseTiming: cfg.CoarseTiming, PrefixCaching: cfg.PrefixCaching,
			KVConnector: nixlConnector, Hostname: "ttftop-sim-" + strconv.Itoa(i)}
	}
	link := &kvLink{pick: func() *Server { return leastLoaded(p.prefill) }, bandwidth: cfg.KVBandwidth, setup: cfg.KVSetup}
	for i := range cfg.Prefill + cfg.Decode {
		s, err := New(worker(i))
		if err != nil {
			p.Close()
			return nil, err
		}
		if i < cfg.Prefill {
			p.prefill = append(p.prefill, s)
			continue
		}
		s.kv = link
		p.decode = append(p.decode, s)
	}
	p.router = newRouter(p)
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.load = startRouterLoad(p)
	return p, nil
}

// Start binds every worker's listener and the router's.
func (p *PD) Start(ctx context.Context) error {
	for _, s := range p.Workers() {
		if err := s.Start(ctx); err != nil {
			return err
		}
	}
	return p.router.start(ctx)
}

// Close stops the router's load, the router and every worker.
func (p *PD) Close() error {
	if p.cancel != nil {
		p.cancel()
	}
	if p.load != nil {
		p.load.wg.Wait()
	}
	if p.router != nil {
		p.router.close()
	}
	for _, s := range p.Workers() {
		s.Close()
	}
	return nil
}

// Workers are the prefill workers then the decode workers.
func (p *PD) Workers() []*Server { return append(append([]*Server(nil), p.prefill...), p.decode...) }

// Prefill and Decode are the pools' workers.
func (p *PD) Prefill() []*Server { return p.prefill }
func (p *PD) Decode() []*Server  { return p.decode }

// Role is worker s's role: RolePrefill or RoleDecode.
func (p *PD) Role(s *Server) string {
	if s.kv != nil {
		return RoleDecode
	}
	return RolePrefill
}

// Router is the deployment's router.
func (p *PD) Router() *Router { return p.router }

// Model is the served model's name.
func (p *PD) Model() string { return p.cfg.Model.Name }

// Pool is the InferencePool's name.
func (p *PD) Pool() string { return p.cfg.Pool }

// ready reports whether a worker still serves (not closed).
func (s *Server) ready() bool { return s.ctx.Err() == nil }

// leastLoaded is the ready worker with the fewest requests, nil when none.
func leastLoaded(pool []*Server) *Server {
	var best *Server
	load := int64(0)
	for _, s := range pool {
		if !s.ready() {
			continue
		}
		e := s.engines[0]
		if n := e.nRunning.Load() + e.nWaiting.Load(); best == nil || n < load {
			best, load = s, n
		}
	}
	return best
}

// prefillRemotely is a decode worker's part before it queues sq: a prefill
// worker computes the prompt (one token, discarded), then the KV cache
// travels for a time set by the link and the scenario. Without a link
// (an aggregated server) it does nothing.
func (s *Server) prefillRemotely(ctx context.Context, e *engine, sq *seq, req Request) error {
	if s.kv == nil {
		return nil
	}
	pw := s.kv.pick()
	if pw == nil {
		return ErrNoPrefill
	}
	preq := req
	preq.Model, preq.PromptTokens, preq.MaxTokens, preq.MinTokens, preq.IgnoreEOS = "", sq.prompt, 1, 0, true
	st, err := pw.Generate(ctx, preq)
	if err != nil {
		return err
	}
	defer st.Close()
	for {
		_, finish, err := st.Recv()
		if err != nil {
			return err
		}
		if finish != "" {
			break
		}
	}
	bytes := float64(sq.prompt) * e.spec.KVBytesPerToken
	transfer := (s.kv.setup.Seconds() + bytes/s.kv.bandwidth) * s.effects(e.spec.Name).kvSlow
	sq.remoteKV, sq.kvTransfer = true, int64(transfer*1e9)
	return nil
}

// KVTransfers is what the decode workers counted of their KV transfers:
// how many, and their total time.
func (p *PD) KVTransfers() (count uint64, total time.Duration) {
	var secs float64
	for _, s := range p.decode {
		m := s.engines[0].metrics
		m.mu.Lock()
		count += m.kv.xfer.count
		secs += m.kv.xfer.sum
		m.mu.Unlock()
	}
	return count, time.Duration(secs * 1e9)
}
