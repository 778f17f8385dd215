package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/telemetry"
)

// Prober sends probe requests to one endpoint. It is safe for concurrent
// use once Discover has returned (or when the model was given).
type Prober struct {
	opts   Options
	proto  Protocol
	client *http.Client
	target target
	model  string
	engine telemetry.Engine
	body   []byte // the request body: identical for every probe
}

// New validates opts and prepares the client; it does no network I/O.
func New(opts Options) (*Prober, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	t, err := resolveURL(opts.URL, opts.API)
	if err != nil {
		return nil, err
	}
	client, err := newClient(opts)
	if err != nil {
		return nil, err
	}
	p := &Prober{opts: opts, proto: protocolFor(t.api), client: client, target: t}
	p.model = sanitize.Text(opts.Model)
	if p.model == "" {
		p.model = t.model
	}
	p.engine = guessEngine(t.api, "")
	if err := p.buildBody(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Prober) buildBody() error {
	body, err := p.proto.BuildRequest(RequestSpec{
		Model:           p.model,
		Prompt:          p.opts.Prompt,
		MaxTokens:       p.opts.MaxTokens,
		Temperature:     p.opts.Temperature,
		Seed:            p.opts.Seed,
		IncludeUsage:    !p.opts.NoUsage,
		ContinuousUsage: !p.opts.NoUsage && p.opts.ContinuousUsage,
		IncludeMetrics:  p.opts.IncludeMetrics,
	})
	if err != nil {
		return fmt.Errorf("building the request: %w", err)
	}
	p.body = body
	return nil
}

// Discover lists the server's models when no model was given and picks
// the first; it returns what the server listed (nil when it was not
// asked). A protocol whose request does not name a model (TGI, llama.cpp)
// tolerates a failed listing.
func (p *Prober) Discover(ctx context.Context) ([]Model, error) {
	if p.model != "" && p.engine != telemetry.EngineUnknown {
		return nil, nil
	}
	models, err := p.listModels(ctx)
	if err != nil {
		if p.model != "" || !p.proto.NeedsModel() {
			return nil, nil
		}
		pe := classify(ctx, err, false)
		switch pe.kind {
		case ErrConnect, ErrDNS, ErrTLS, ErrTimeout:
			// Nothing to do with the model: the server is not reachable.
			return nil, &probeError{kind: pe.kind, msg: "cannot reach " + p.target.host + " to list its models: " + pe.msg}
		case ErrHTTPStatus, ErrInvalidEvent:
			// It answered, with something else than a model list.
			return nil, &probeError{kind: pe.kind, msg: "reached " + p.target.host + ", but it does not look like an LLM server (give --model and --api if it is one): " + pe.msg}
		}
		return nil, fmt.Errorf("discovering the model (give one with --model): %w", err)
	}
	if p.model == "" {
		p.model = models[0].ID
		if err := p.buildBody(); err != nil {
			return nil, err
		}
	}
	for _, m := range models {
		if m.ID == p.model {
			if e := guessEngine(p.proto.API(), m.OwnedBy); e != telemetry.EngineUnknown {
				p.engine = e
			}
		}
	}
	return models, nil
}

// Host is the endpoint's host:port, the name of a server whose models are
// not known yet.
func (p *Prober) Host() string { return p.target.host }

// Options are the options the prober runs with: the given ones with
// their defaults filled in.
func (p *Prober) Options() Options { return p.opts }

// Model is the model probed ("" until known).
func (p *Prober) Model() string { return p.model }

// API is the protocol in use.
func (p *Prober) API() API { return p.proto.API() }

// URL is the stream URL as displayed: no credentials, no query.
func (p *Prober) URL() string { return p.displayOf(p.endpointURL()) }

// Endpoint describes the probed endpoint for telemetry.
func (p *Prober) Endpoint() telemetry.Endpoint {
	name := p.opts.Name
	if name == "" {
		name = p.target.host + "/" + firstNonEmpty(p.model, string(p.proto.API()))
	}
	e := telemetry.Endpoint{Name: name, BaseURL: p.displayOf(p.target.root), Model: p.model, Engine: p.engine,
		Labels: map[string]string{"api": string(p.proto.API())}}
	for k, v := range p.opts.Labels {
		e.Labels[k] = sanitize.Text(v)
	}
	if p.opts.Auth.Insecure {
		e.Labels["tls"] = "NOT VERIFIED"
	}
	if p.opts.AdapterOf != "" {
		e.Labels[telemetry.LabelAdapterOf] = p.opts.AdapterOf
	}
	return e
}

// Close releases idle connections.
func (p *Prober) Close() { p.client.CloseIdleConnections() }

func (p *Prober) endpointURL() string {
	u := p.target.endpoint
	if u == "" {
		u = p.target.root + p.proto.Path(p.model)
	}
	return withQuery(u, p.target.query)
}

func withQuery(u, query string) string {
	if query == "" {
		return u
	}
	return u + "?" + query
}

func (p *Prober) setHeaders(h http.Header, key Secret) {
	h.Set("User-Agent", "ttftop-probe")
	// Identity: compressed streams are buffered by gzip middleware.
	h.Set("Accept-Encoding", "identity")
	p.proto.SetAuth(h, key)
	for _, hd := range p.opts.Headers {
		h.Set(hd.Name, hd.Value.Reveal())
	}
}

func (p *Prober) scrubberFor(key Secret) scrubber {
	s := scrubber{key.Reveal()}
	for _, h := range p.opts.Headers {
		s = append(s, h.Value.Reveal())
	}
	return s
}

// Prewarm opens n connections with a cheap GET so that connection setup
// does not land on measured requests. Answers are ignored: only the
// connection matters.
func (p *Prober) Prewarm(ctx context.Context, n int) error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.target.root+warmPath(p.proto.API()), nil)
			if err != nil {
				errs[i] = err
				return
			}
			key, err := p.opts.Auth.token()
			if err != nil {
				errs[i] = err
				return
			}
			p.setHeaders(req.Header, key)
			resp, err := p.client.Do(req)
			if err != nil {
				errs[i] = errors.New(sanitize.Text(p.scrubberFor(key).scrub(err.Error())))
				return
			}
			// Drain (bounded) so the connection goes back to the pool.
			_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			errs[i] = errors.Join(err, resp.Body.Close())
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Progress is a token-bearing event as it arrives, for live display.
type Progress struct {
	Fragment string        // raw text of the event, credentials scrubbed; sanitise before display
	Tokens   int           // output tokens so far (server count when reported, else events)
	At       time.Duration // since start
	TTFT     time.Duration
	Parts    Part // what the event carried: reasoning, answer, tool call
}

// Do runs one probe request. progress, when not nil, is called for every
// token-bearing event, on the calling goroutine.
func (p *Prober) Do(ctx context.Context, progress func(Progress)) *Result {
	res, retry := p.attempt(ctx, progress)
	if retry {
		// A pooled connection died before answering (the server closed it
		// while idle): our pool's fault, not the endpoint's.
		res, _ = p.attempt(ctx, progress)
		res.Warnings = append(res.Warnings, "a pooled connection was dead; retried once on a new connection")
	}
	res.Duration = time.Since(res.Start)
	return res
}

// attempt is one HTTP request; retry is true when it failed on a reused
// connection before any response byte.
func (p *Prober) attempt(ctx context.Context, progress func(Progress)) (*Result, bool) {
	res := &Result{TokensSource: TokensEvents}
	key, err := p.opts.Auth.token()
	if err != nil {
		res.Start = time.Now()
		return res.fail(failf(ErrConfig, sanitize.Text(err.Error()))), false
	}
	scrub := p.scrubberFor(key)

	ctx, cancelTimeout := context.WithTimeoutCause(ctx, p.opts.Timeout, errTimeout)
	defer cancelTimeout()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The stall timer restarts at the request write, at the response
	// headers and at every complete event or comment. Trickled bytes do
	// not restart it: a slow-loris server stalls like a silent one.
	stall := time.AfterFunc(p.opts.StallTimeout, func() { cancel(errStall) })
	defer stall.Stop()

	tr := &traceRec{onConn: func() { stall.Reset(p.opts.StallTimeout) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, tr.clientTrace()),
		http.MethodPost, p.endpointURL(), bytes.NewReader(p.body))
	if err != nil {
		res.Start = time.Now()
		return res.fail(failf(ErrConfig, sanitize.Text(err.Error()))), false
	}
	p.setHeaders(req.Header, key)
	req.Header.Set("Content-Type", "application/json")
	if p.proto.Framing() == FrameNDJSON {
		req.Header.Set("Accept", "application/x-ndjson")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}

	issued := time.Now()
	resp, err := p.client.Do(req)
	tr.fill(res, issued)
	if err != nil {
		pe := classify(ctx, err, false)
		pe.msg = scrub.scrub(pe.msg)
		retry := res.Reused && !tr.gotFirstByte() && pe.kind == ErrConnect && ctx.Err() == nil
		return res.fail(pe), retry
	}
	// A response body's Close error says nothing about the endpoint.
	defer func() { _ = resp.Body.Close() }()
	stall.Reset(p.opts.StallTimeout)
	res.Status, res.Proto = resp.StatusCode, resp.Proto
	res.RequestID = sanitize.Text(scrub.scrub(resp.Header.Get("X-Request-Id")))

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			res.RetryAfter = retryAfter(resp.Header, time.Now())
		}
		return res.fail(httpFailure(resp, scrub)), false
	}
	body, warn, pe := p.streamBody(resp, scrub)
	if pe != nil {
		return res.fail(pe), false
	}
	if warn != "" {
		res.Warnings = append(res.Warnings, warn)
	}
	if c, ok := body.(io.Closer); ok {
		defer func() { _ = c.Close() }()
	}
	var fr framer
	lr := newLineReader(body, res.Start, p.opts.MaxLineBytes)
	if p.proto.Framing() == FrameNDJSON {
		fr = &ndjsonFramer{lr: lr}
	} else {
		fr = &sseFramer{lr: lr}
	}
	m := newMeter(p.opts.MaxTokens)
	res = p.stream(ctx, res, fr, p.proto.NewParser(), m, stall, scrub, progress)
	if res.ErrorKind == ErrTruncated && m.frames == 0 && !m.broken {
		// Nothing parsed from a body that ended: a login page or proxy
		// answer, not a stream. A body cut before its end (unexpected EOF)
		// stays truncated: the connection broke, the answer was not wrong.
		ct := sanitize.Text(resp.Header.Get("Content-Type"))
		res.fail(failf(ErrInvalidEvent, "the answer holds no events (Content-Type "+firstNonEmpty(ct, "none")+")"))
	}
	return res, false
}

// streamBody checks that the 2xx answer is a stream and undoes a
// compression the server applied although we asked for identity.
func (p *Prober) streamBody(resp *http.Response, scrub scrubber) (io.Reader, string, *probeError) {
	if mediaType(resp.Header) == "application/json" && p.proto.Framing() == FrameSSE {
		// Servers answer errors (and non-streaming responses) as one JSON
		// document: that is not a stream to time.
		b, rerr := readExcerpt(resp.Body)
		if msg := jsonErrorMessage(b); msg != "" {
			return nil, "", failf(ErrStream, sanitize.Text(scrub.scrub(msg)))
		}
		return nil, "", failf(ErrInvalidEvent, "expected a stream, got application/json: "+sanitize.Text(scrub.scrub(string(b)))+rerr)
	}
	switch ce := strings.ToLower(resp.Header.Get("Content-Encoding")); ce {
	case "", "identity":
		return resp.Body, "", nil
	case "gzip", "x-gzip":
		gz, err := newGzipReader(resp.Body)
		if err != nil {
			return nil, "", failf(ErrInvalidEvent, "gzip stream: "+sanitize.Text(err.Error()))
		}
		return gz, "server compressed the stream although asked for identity: compression may buffer events and distort timings", nil
	default:
		return nil, "", failf(ErrInvalidEvent, "unsupported Content-Encoding "+sanitize.Text(ce))
	}
}

// stream reads events until the end of the body and measures them.
func (p *Prober) stream(ctx context.Context, res *Result, fr framer, parser Parser, m *meter, stall *time.Timer, scrub scrubber, progress func(Progress)) *Result {
	n := 0
	for {
		f, err := fr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var tooLong errLineTooLong
			if errors.As(err, &tooLong) {
				return res.fail(failf(ErrLineTooLong, tooLong.Error()))
			}
			if m.done {
				break // the stream was complete; what follows does not matter
			}
			pe := classify(ctx, err, true)
			pe.msg = scrub.scrub(pe.msg)
			m.broken = true
			return m.finish(res).fail(pe)
		}
		if m.done {
			// After the terminal event only the connection's return to the
			// pool is at stake: do not wait long for the body's end.
			stall.Reset(min(p.opts.StallTimeout, time.Second))
		} else {
			stall.Reset(p.opts.StallTimeout)
		}
		if f.comment || m.done {
			continue
		}
		n++
		m.frames = n
		if f.unterminated {
			res.Warnings = append(res.Warnings, "the last event was not terminated (no newline at EOF)")
		}
		ev, err := parser.ParseEvent(f.name, f.data)
		if err != nil {
			msg := fmt.Sprintf("event %d: invalid JSON (%v): %s", n, err, scrub.scrub(string(f.data)))
			return m.finish(res).fail(failf(ErrInvalidEvent, sanitize.Text(msg)))
		}
		if ev.ErrMsg != "" {
			return m.finish(res).fail(failf(ErrStream, sanitize.Text(scrub.scrub(ev.ErrMsg))))
		}
		m.add(f.at, &ev)
		if progress != nil && ev.Text != "" {
			progress(Progress{Fragment: scrub.scrub(ev.Text), Tokens: m.tokensSoFar(), At: f.at, TTFT: m.offsets[0], Parts: ev.Parts})
		}
	}
	m.finish(res)
	if m.model != "" {
		res.Model = sanitize.Text(scrub.scrub(m.model))
	}
	switch {
	case m.done, p.proto.EOFTerminates():
	case m.finished:
		// TGI 1.4.3 and some providers end a finished stream without
		// [DONE]: the generation is complete, the marker is missing.
		res.Warnings = append(res.Warnings, "stream ended without its terminal event after a finish_reason")
	default:
		return res.fail(failf(ErrTruncated, "stream ended before its terminal event"))
	}
	if res.Events == 0 {
		return res.fail(failf(ErrNoOutput, "the stream completed without any output text"))
	}
	res.OK = true
	if w := burstWarning(res.EventOffsets); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	return res
}

// fail marks the result failed and drops its latencies: a failed probe's
// timings are meaningless (blackbox_exporter semantics).
func (r *Result) fail(pe *probeError) *Result {
	r.OK = false
	r.ErrorKind, r.Err = pe.kind, pe.msg
	r.TTFT, r.E2E = 0, 0
	r.EventOffsets, r.EventParts = nil, nil
	return r
}

// httpFailure turns a non-2xx answer into a failure with a short, safe
// excerpt of the body (bodies can echo request headers: scrubbed).
func httpFailure(resp *http.Response, scrub scrubber) *probeError {
	b, rerr := readExcerpt(resp.Body)
	text := jsonErrorMessage(b)
	if text == "" {
		text = bodyExcerpt(b)
	}
	msg := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if text != "" {
		msg += ": " + sanitize.Text(scrub.scrub(text))
	}
	msg += rerr
	kind := ErrHTTPStatus
	if resp.StatusCode == http.StatusTooManyRequests {
		kind = ErrRateLimited
	}
	return failf(kind, msg)
}

// readExcerpt reads the start of an error body. A failed read is noted in
// the returned suffix: the status is the failure, the body only explains.
func readExcerpt(r io.Reader) ([]byte, string) {
	b, err := io.ReadAll(io.LimitReader(r, 4<<10))
	if err != nil {
		return b, " (body cut short: " + sanitize.Text(err.Error()) + ")"
	}
	return b, ""
}

// mediaType is the Content-Type without parameters; an unparseable one
// counts as absent (the stream is then judged by its content).
func mediaType(h http.Header) string {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// retryAfter parses Retry-After (seconds or an HTTP date), capped at an
// hour so a hostile header cannot silence a probe for days.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		d = time.Duration(secs * float64(time.Second))
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return max(0, min(d, time.Hour))
}

// jsonErrorMessage extracts {"error": …}, {"message": …} or FastAPI's
// {"detail": "…"} from a JSON body.
func jsonErrorMessage(b []byte) string {
	var doc struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return ""
	}
	if msg := errorMessage(doc.Error); msg != "" {
		return msg
	}
	if doc.Message != "" {
		return doc.Message
	}
	if s, ok := doc.Detail.(string); ok {
		return s
	}
	return ""
}

// Format keeps a printed Prober from showing its options' unexported
// copies of credentials: it prints only the redacted URL.
func (p *Prober) Format(f fmt.State, _ rune) {
	_, _ = io.WriteString(f, "probe.Prober("+p.URL()+")")
}
