package sim

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Router is the llm-d router (its endpoint picker, EPP) in front of a PD
// deployment: it sends each request to the least loaded decode worker and
// measures what the user gets, as the EPP does: TTFT from the request's
// arrival to the first response chunk, the gaps between chunks, the
// streaming TPOT ((e2e − TTFT)/(tokens − 1)), the duration, and the
// requests over its TTFT and TPOT objectives. Its page (/metrics) writes
// the llm_d_epp_* names and the Gateway API Inference Extension's
// inference_objective_* and inference_pool_* names beside them.
type Router struct {
	pd      *PD
	running atomic.Int64

	mu                     sync.Mutex
	ttft, itl, tpot, dur   *histogram
	total, errs            float64
	ttftMissed, tpotMissed float64

	handler http.Handler
	srv     *http.Server
	url     string
	wg      sync.WaitGroup
}

// The EPP's bounds (llm-d-router pkg/epp/metrics/metrics.go).
var (
	eppTTFTBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6,
		8, 10, 15, 20, 30, 45, 60, 120}
	eppTPOTBuckets = []float64{0.0005, 0.00205, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.125, 0.15, 0.2,
		0.3, 0.4, 0.5, 0.6, 0.8, 1, 2}
	eppITLBuckets      = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 2}
	eppDurationBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6,
		8, 10, 15, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600}
)

func newRouter(p *PD) *Router {
	r := &Router{pd: p, ttft: newHistogram(eppTTFTBuckets), itl: newHistogram(eppITLBuckets),
		tpot: newHistogram(eppTPOTBuckets), dur: newHistogram(eppDurationBuckets)}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", r.serveMetrics)
	mux.HandleFunc("/v1/", r.serveAPI)
	r.handler = mux
	return r
}

// Handler serves the router's page and passes /v1/ requests on.
func (r *Router) Handler() http.Handler { return r.handler }

// URL is the router's base URL ("" before PD.Start).
func (r *Router) URL() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.url
}

func (r *Router) start(ctx context.Context) error {
	addr := r.pd.cfg.Listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.url = "http://" + ln.Addr().String()
	r.srv = &http.Server{Handler: r.handler, ReadHeaderTimeout: 10 * time.Second}
	srv := r.srv
	r.mu.Unlock()
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		srv.Serve(ln)
	}()
	go func() {
		defer r.wg.Done()
		select {
		case <-ctx.Done():
		case <-r.pd.ctx.Done():
		}
		srv.Close()
	}()
	return nil
}

func (r *Router) close() {
	r.mu.Lock()
	srv := r.srv
	r.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
	r.wg.Wait()
}

// routed is one request's life at the router.
type routed struct {
	r                  *Router
	start, first, last time.Time
	chunks             int
}

func (r *Router) begin() *routed {
	r.running.Add(1)
	return &routed{r: r, start: time.Now()}
}

// chunk notes a response chunk of n tokens.
func (q *routed) chunk(now time.Time) {
	r := q.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if q.chunks == 0 {
		q.first = now
		ttft := now.Sub(q.start)
		r.ttft.observe(ttft.Seconds())
		if ttft > r.pd.cfg.TTFTGoal {
			r.ttftMissed++
		}
	} else {
		r.itl.observe(now.Sub(q.last).Seconds())
	}
	q.chunks++
	q.last = now
}

// end closes the request: tokens is its output length (0 when unknown,
// then no TPOT), failed whether it ended in an error.
func (q *routed) end(tokens int, failed bool) {
	r := q.r
	r.running.Add(-1)
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total++
	if failed {
		r.errs++
		return
	}
	r.dur.observe(now.Sub(q.start).Seconds())
	if tokens > 1 && q.chunks > 0 {
		tpot := q.last.Sub(q.first).Seconds() / float64(tokens-1)
		r.tpot.observe(tpot)
		if tpot > r.pd.cfg.TPOTGoal.Seconds() {
			r.tpotMissed++
		}
	}
}

// serveAPI passes an OpenAI request to a decode worker, timing the
// response's body writes as the EPP times chunks.
func (r *Router) serveAPI(w http.ResponseWriter, req *http.Request) {
	d := leastLoaded(r.pd.decode)
	if d == nil {
		q := r.begin()
		http.Error(w, "no ready endpoints", http.StatusServiceUnavailable)
		q.end(0, true)
		return
	}
	q := r.begin()
	tw := &timedWriter{ResponseWriter: w, q: q}
	d.Handler().ServeHTTP(tw, req)
	q.end(0, tw.status >= 400)
}

// timedWriter notes every body write as a chunk.
type timedWriter struct {
	http.ResponseWriter
	q      *routed
	status int
}

func (t *timedWriter) WriteHeader(code int) {
	t.status = code
	t.ResponseWriter.WriteHeader(code)
}

func (t *timedWriter) Write(b []byte) (int, error) {
	if len(b) > 0 && t.status < 400 {
		t.q.chunk(time.Now())
	}
	return t.ResponseWriter.Write(b)
}

func (t *timedWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// routerLoad is the deployment's client streams: in-process requests
// through the router, each streamed to its end.
type routerLoad struct {
	wg sync.WaitGroup
}

func startRouterLoad(p *PD) *routerLoad {
	l := &routerLoad{}
	for i := range p.cfg.Load {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			p.router.client(p.ctx, rand.New(rand.NewPCG(uint64(p.cfg.Seed), uint64(i)+0x9d)))
		}()
	}
	return l
}

// client sends requests one after another (prompts and answers sized as
// the background load's), thinking between them.
func (r *Router) client(ctx context.Context, rng *rand.Rand) {
	timer := time.NewTimer(time.Duration(rng.Float64() * float64(500*time.Millisecond)))
	defer timer.Stop()
	spec := r.pd.cfg.Model
	limit := max(spec.MaxModelLen, 4096)
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		prompt := min(max(int(math.Round(300*math.Exp(0.8*rng.NormFloat64()))), 16), limit/4)
		req := Request{PromptTokens: prompt, MaxTokens: 64 + rng.IntN(449)}
		if share := r.pd.cfg.SharedPrefixShare; share > 0 && rng.Float64() < share {
			req.PrefixKey, req.PrefixTokens = systemPrompt(rng)
			req.PromptTokens = min(prompt+req.PrefixTokens, limit/2)
		}
		failed := r.send(ctx, req)
		pause := time.Duration(rng.ExpFloat64() * float64(250*time.Millisecond))
		if failed {
			pause = 500 * time.Millisecond // a polite client backs off
		}
		timer.Reset(min(pause, 2*time.Second))
	}
}

// Send streams one request through the router to its end, as its
// background clients do (tests send their own, counted): an error when it
// failed.
func (r *Router) Send(ctx context.Context, req Request) error {
	if r.send(ctx, req) {
		return errors.New("sim: request through the router failed")
	}
	return nil
}

// send streams one request through the router; it reports a failure.
func (r *Router) send(ctx context.Context, req Request) bool {
	q := r.begin()
	d := leastLoaded(r.pd.decode)
	if d == nil {
		q.end(0, true)
		return true
	}
	st, err := d.Generate(ctx, req)
	if err != nil {
		q.end(0, ctx.Err() == nil)
		return true
	}
	defer st.Close()
	tokens := 0
	for {
		toks, finish, err := st.Recv()
		if len(toks) > 0 {
			q.chunk(time.Now())
			tokens += len(toks)
		}
		if err != nil {
			q.end(tokens, ctx.Err() == nil)
			return true
		}
		if finish != "" {
			q.end(tokens, false)
			return false
		}
	}
}

// RouterTTFTResolution is the width of the router's TTFT histogram bucket
// that holds v (seconds): what a figure read from it cannot tell apart.
func RouterTTFTResolution(v float64) float64 {
	lower := 0.0
	for _, b := range eppTTFTBuckets {
		if v <= b {
			return b - lower
		}
		lower = b
	}
	return math.Inf(1)
}
