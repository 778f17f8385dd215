package probe

import (
	"cmp"
	"compress/gzip"
	"crypto/tls"
	"fmt"
	"io"
	"net/http/httptrace"
	"sync"
	"time"
)

// meter is the measurement core shared by every protocol: it turns parsed
// events into the figures of docs/definitions.md.
type meter struct {
	offsets       []time.Duration // token-bearing event arrivals
	parts         []Part          // what each token-bearing event carried, aligned with offsets
	perEvent      []int
	perEventKnown bool
	cum           int // last cumulative output-token count reported
	hasCum        bool
	cumAtLastTok  int
	src           TokenSource
	prompt        int
	done          bool // terminal event seen
	finished      bool // finish_reason seen
	model         string
	frames        int  // events parsed, token-bearing or not
	broken        bool // the body's read failed (cut), as against ending
	ollama        *OllamaTimings
	llamaCpp      *LlamaCppTimings
	vllm          *VLLMMetrics
	reasoning     int // server's count of reasoning tokens
	hasReasoning  bool
	think         thinkTags
}

func newMeter(maxTokens int) *meter {
	// Room for one event per token, so the hot path does not grow slices.
	c := min(maxTokens+1, 4096)
	return &meter{offsets: make([]time.Duration, 0, c), parts: make([]Part, 0, c), perEvent: make([]int, 0, c),
		perEventKnown: true}
}

func (m *meter) add(at time.Duration, ev *Event) {
	if ev.Text != "" {
		m.offsets = append(m.offsets, at)
		part := cmp.Or(ev.Parts, PartAnswer)
		if part == PartAnswer && m.think.state != thinkDone {
			var relabel []int
			part, relabel = m.think.classify(len(m.parts), ev.Text)
			for _, i := range relabel {
				m.parts[i] = PartReasoning
			}
		}
		m.parts = append(m.parts, part)
		switch {
		case ev.EventTokens > 0:
			m.perEvent = append(m.perEvent, ev.EventTokens)
		case ev.HasTokens:
			// Per-chunk cumulative usage (vLLM continuous usage, Novita,
			// Hyperbolic): the tokens since the previous token-bearing
			// event, so the list sums to n.
			m.perEvent = append(m.perEvent, ev.CumTokens-m.cumAtLastTok)
		default:
			m.perEvent = append(m.perEvent, 0)
			m.perEventKnown = false
		}
	}
	if ev.HasTokens {
		m.cum, m.hasCum, m.src = ev.CumTokens, true, ev.TokensSource
		if ev.Text != "" {
			m.cumAtLastTok = ev.CumTokens
		}
	}
	if ev.PromptTokens > 0 {
		m.prompt = ev.PromptTokens
	}
	if ev.HasReasoning {
		m.reasoning, m.hasReasoning = ev.ReasoningTokens, true
	}
	if ev.Model != "" && m.model == "" {
		m.model = ev.Model
	}
	if ev.Ollama != nil {
		m.ollama = ev.Ollama
	}
	if ev.LlamaCpp != nil {
		m.llamaCpp = ev.LlamaCpp
	}
	if ev.VLLM != nil {
		m.vllm = ev.VLLM
	}
	m.done = m.done || ev.Done
	m.finished = m.finished || ev.Finished
}

// tokensSoFar is the running n: the server's count when it reports one
// per event, else the events seen.
func (m *meter) tokensSoFar() int {
	if m.hasCum && m.cum >= len(m.offsets) {
		return m.cum
	}
	return len(m.offsets)
}

// finish writes the figures into res.
func (m *meter) finish(res *Result) *Result {
	res.Events = len(m.offsets)
	res.EventOffsets, res.EventParts = m.offsets, m.parts
	res.ReasoningReported, res.HasReasoningReported = m.reasoning, m.hasReasoning
	res.PromptTokens = m.prompt
	res.Ollama, res.LlamaCpp, res.VLLM = m.ollama, m.llamaCpp, m.vllm
	res.OutputTokens, res.TokensSource = res.Events, TokensEvents
	if m.hasCum && m.cum > 0 {
		res.OutputTokens, res.TokensSource = m.cum, m.src
	}
	switch {
	case res.Events == 0:
	case m.perEventKnown:
		res.TokensPerEvent = m.perEvent
	case res.TokensSource != TokensEvents && res.OutputTokens == res.Events:
		// The server counted n tokens in n events: one each, exactly.
		for i := range m.perEvent {
			m.perEvent[i] = 1
		}
		res.TokensPerEvent = m.perEvent
	}
	if res.Events > 0 {
		res.TTFT, res.E2E = m.offsets[0], m.offsets[len(m.offsets)-1]
	}
	return res
}

// burstWarning flags streams whose events mostly arrive together: a
// buffering proxy (nginx proxy_buffering) or a server that batches
// flushes; ITL then shows the buffering, not the engine.
func burstWarning(offsets []time.Duration) string {
	if len(offsets) < 10 {
		return ""
	}
	close := 0
	for i := 1; i < len(offsets); i++ {
		if offsets[i]-offsets[i-1] < time.Millisecond {
			close++
		}
	}
	if close*2 <= len(offsets)-1 {
		return ""
	}
	return fmt.Sprintf("%d of %d event gaps are under 1 ms: buffered path (proxy buffering or batched flushes)?", close, len(offsets)-1)
}

// traceRec collects connection timings from httptrace. Callbacks run on
// transport goroutines, hence the lock.
type traceRec struct {
	mu                  sync.Mutex
	onConn              func()
	dnsStart, dnsDone   time.Time
	connStart, connDone time.Time
	tlsStart, tlsDone   time.Time
	gotConn, firstByte  time.Time
	reused              bool
}

func (t *traceRec) clientTrace() *httptrace.ClientTrace {
	set := func(p *time.Time) func() {
		return func() {
			now := time.Now()
			t.mu.Lock()
			if p.IsZero() {
				*p = now
			}
			t.mu.Unlock()
		}
	}
	return &httptrace.ClientTrace{
		DNSStart:          func(httptrace.DNSStartInfo) { set(&t.dnsStart)() },
		DNSDone:           func(httptrace.DNSDoneInfo) { set(&t.dnsDone)() },
		ConnectStart:      func(string, string) { set(&t.connStart)() },
		ConnectDone:       func(string, string, error) { set(&t.connDone)() },
		TLSHandshakeStart: set(&t.tlsStart),
		TLSHandshakeDone:  func(tls.ConnectionState, error) { set(&t.tlsDone)() },
		// start: the connection is ready and the request is about to be
		// written. Connection setup is reported apart, not inside TTFT.
		GotConn: func(info httptrace.GotConnInfo) {
			now := time.Now()
			t.mu.Lock()
			t.gotConn, t.reused = now, info.Reused
			t.mu.Unlock()
			if t.onConn != nil {
				t.onConn()
			}
		},
		GotFirstResponseByte: set(&t.firstByte),
	}
}

func (t *traceRec) gotFirstByte() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.firstByte.IsZero()
}

// fill copies the timings into res; issued is the fallback start when no
// connection was obtained.
func (t *traceRec) fill(res *Result, issued time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	res.Start = t.gotConn
	if res.Start.IsZero() {
		res.Start = issued
	}
	res.Reused = t.reused
	span := func(a, b time.Time) time.Duration {
		if a.IsZero() || b.IsZero() {
			return 0
		}
		return b.Sub(a)
	}
	res.DNS = span(t.dnsStart, t.dnsDone)
	res.Connect = span(t.connStart, t.connDone)
	res.TLS = span(t.tlsStart, t.tlsDone)
	if !t.firstByte.IsZero() {
		res.TTFB = t.firstByte.Sub(res.Start)
	}
}

// newGzipReader wraps a body the server compressed anyway. gzip.NewReader
// reads the header, so it blocks until the first compressed bytes arrive.
func newGzipReader(r io.Reader) (io.ReadCloser, error) {
	return gzip.NewReader(r)
}
