package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"
)

const maxBody = 8 << 20

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", s.serveModels)
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.serveGenerate(w, r, true) })
	mux.HandleFunc("/v1/completions", func(w http.ResponseWriter, r *http.Request) { s.serveGenerate(w, r, false) })
	mux.HandleFunc("/metrics", s.serveMetrics)
	mux.HandleFunc("/health", s.serveHealth)
	mux.HandleFunc("/sim/stats", s.serveSimStats)
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"version":"0.10.1"}`)
	})
	return mux
}

// serveHealth answers 200 with an empty body like vLLM, 503 while every
// model is in an outage.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	for _, e := range s.engines {
		if !s.effects(e.spec.Name).outage {
			w.WriteHeader(http.StatusOK)
			return
		}
	}
	w.WriteHeader(http.StatusServiceUnavailable)
}

// serveSimStats is the simulator's own JSON view (not a vLLM endpoint):
// per-model Stats and the schedule-error summaries, durations in ns.
func (s *Server) serveSimStats(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(struct {
		Models         []ModelStats
		ScheduleErrors ScheduleStats
		StepWakeErrors ScheduleStats
	}{s.Stats(), s.ScheduleErrors(), s.StepWakeErrors()})
}

func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeAPIError(w, &apiError{Status: http.StatusMethodNotAllowed, Type: "MethodNotAllowed", Message: "Method Not Allowed"})
		return
	}
	owner := "vllm"
	if s.format == FormatSGLang {
		owner = "sglang"
	}
	created := s.wallStart.Unix()
	list := modelListJSON{Object: "list", Data: []modelJSON{}}
	entry := func(id, root string, parent any, maxLen int) modelJSON {
		return modelJSON{ID: id, Object: "model", Created: created, OwnedBy: owner,
			Root: root, Parent: parent, MaxModelLen: maxLen, Permission: []permissionJSON{{
				ID: fmt.Sprintf("modelperm-%016x", mix(textSeed(s.cfg.Seed, id, ""))), Object: "model_permission",
				Created: created, AllowSampling: true, AllowLogprobs: true, AllowView: true, Organization: "*",
			}}}
	}
	for _, e := range s.engines {
		if e.rank == 0 { // one entry per model, whatever its ranks
			list.Data = append(list.Data, entry(e.spec.Name, e.spec.Name, nil, e.spec.MaxModelLen))
		}
	}
	// vLLM lists its LoRA adapters after the base models: root is the
	// adapter's path, parent the base model's name.
	for _, e := range s.engines {
		if e.rank > 0 {
			continue
		}
		for _, a := range e.spec.Adapters {
			list.Data = append(list.Data, entry(a, "/adapters/"+a, e.spec.Name, e.spec.MaxModelLen))
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(list)
}

// engineError maps engine refusals to HTTP errors.
func engineError(err error, fx effects, model string) *apiError {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, ErrQueueFull):
		return &apiError{Status: http.StatusTooManyRequests, Type: "RateLimitError", RetryAfter: 1,
			Message: fmt.Sprintf("The waiting queue of model %s is full; retry later.", model)}
	case errors.Is(err, ErrOutage):
		return &apiError{Status: http.StatusServiceUnavailable, Type: "ServiceUnavailableError",
			RetryAfter: max(1, int(math.Ceil(fx.outageLeft.Seconds()))),
			Message:    fmt.Sprintf("Model %s is temporarily unavailable (simulated outage).", model)}
	case errors.Is(err, ErrNoPrefill):
		return &apiError{Status: http.StatusServiceUnavailable, Type: "ServiceUnavailableError",
			Message: fmt.Sprintf("No prefill worker of model %s is ready.", model)}
	case errors.Is(err, ErrClosed):
		return &apiError{Status: http.StatusServiceUnavailable, Type: "ServiceUnavailableError",
			Message: "The server is shutting down."}
	}
	return &apiError{Status: http.StatusInternalServerError, Type: "InternalServerError", Message: err.Error()}
}

func (s *Server) serveGenerate(w http.ResponseWriter, r *http.Request, chat bool) {
	if r.Method != http.MethodPost {
		writeAPIError(w, &apiError{Status: http.StatusMethodNotAllowed, Type: "MethodNotAllowed", Message: "Method Not Allowed"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeAPIError(w, badRequest("", "cannot read body: "+err.Error()))
		return
	}
	p, aerr := parseRequest(body, chat)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	e, err := s.engineFor(p.req.Model)
	if err != nil {
		writeAPIError(w, &apiError{Status: http.StatusNotFound, Type: "NotFoundError", Param: "model",
			Message: fmt.Sprintf("The model `%s` does not exist.", p.req.Model)})
		return
	}
	fx := s.effects(e.spec.Name)
	if fx.outage {
		writeAPIError(w, engineError(ErrOutage, fx, e.spec.Name))
		return
	}
	if !holdFor(r.Context(), fx.netDelay) {
		return // the client left while the network held its request
	}
	sq, err := e.newSeq(p.req)
	if err == nil {
		err = s.prefillRemotely(r.Context(), e, sq, p.req)
	}
	if err == nil {
		err = e.submit(sq)
	}
	if err != nil {
		writeAPIError(w, engineError(err, fx, e.spec.Name))
		return
	}
	prefix := "cmpl-"
	if chat {
		prefix = "chatcmpl-"
	}
	id := prefix + fmt.Sprintf("%016x%016x", mix(uint64(s.cfg.Seed)^sq.id), mix(sq.id))
	created := s.wallNow().Unix()
	if p.stream {
		s.stream(w, r, e, sq, newChunkFormat(chat, id, created, e.spec.Name), p.usage)
		return
	}
	s.respond(w, r, e, sq, chat, id, created)
}

// stream writes SSE chunks as the engine produces tokens: headers at once
// (as uvicorn does), the role chunk with the first token, one chunk per
// engine step (a speculative step's accepted tokens together), then usage
// and [DONE]. Each wake-up drains all pending tokens and
// flushes once; the flush time against each token's step deadline feeds
// the schedule-error histogram.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, e *engine, sq *seq, f *chunkFormat, usage streamUsage) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	// A departing client aborts through the engine, which then wakes us
	// via notify: the hot loop waits on one channel only (see Generate).
	stop := context.AfterFunc(r.Context(), func() { e.abort(sq) })
	defer stop()
	buf := make([]byte, 0, 1024)
	var times []int64
	var text []byte // one step's tokens' text
	for {
		<-sq.notify
		b := sq.take(times)
		times = b.times
		buf = buf[:0]
		for i := 0; i < len(b.times); {
			if b.first+i == 0 && f.chat {
				buf = f.role(buf)
				if usage.continuous {
					buf = f.withUsage(buf, sq.prompt, 0, 0)
				}
			}
			var n int
			buf, n = stepChunk(buf, f, sq, b, i, &text)
			i += n
			if usage.continuous {
				sent := b.first + i
				buf = f.withUsage(buf, sq.prompt, sent, sq.reasoningOf(sent))
			}
		}
		end := b.finish != ""
		if b.err != nil {
			buf = errorEvent(buf, engineError(b.err, s.effects(e.spec.Name), e.spec.Name))
			buf = done(buf)
		} else if end {
			if usage.final {
				n := b.first + len(b.times)
				buf = f.usage(buf, sq.prompt, n, sq.reasoningOf(n))
			}
			buf = done(buf)
		}
		if len(buf) > 0 {
			if _, err := w.Write(buf); err != nil {
				e.abort(sq)
				return
			}
			if err := rc.Flush(); err != nil {
				e.abort(sq)
				return
			}
			s.sched.recordBatch(s.now(), b.times)
		}
		if end {
			return
		}
	}
}

// stepChunk appends one chunk for the tokens of b from index i that one
// engine step produced (same deadline) and returns how many it took: a
// step's accepted draft tokens go out as one event with a multi-token
// delta, as vLLM and SGLang send them, not as events microseconds apart.
// A switch from thinking to answer inside a step starts a new chunk (the
// delta names one field). The last token carries the finish reason; a
// natural stop's is the EOS token, with no text.
func stepChunk(buf []byte, f *chunkFormat, sq *seq, b batch, i int, text *[]byte) ([]byte, int) {
	*text = (*text)[:0]
	n := 0
	finish := ""
	reasoning := false
	for j := i; j < len(b.times) && b.times[j] == b.times[i]; j++ {
		t, r := "", false
		last := b.err == nil && b.finish != "" && j == len(b.times)-1
		if !last || b.finish != finishStop {
			t, r = sq.tokenAt(b.first + j)
		}
		if n > 0 && r != reasoning && t != "" {
			break
		}
		if n == 0 {
			reasoning = r
		}
		*text = append(*text, t...)
		n++
		if last {
			finish = b.finish
		}
	}
	return f.token(buf, string(*text), finish, reasoning), n
}

// respond waits for the whole answer and writes one JSON response.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, e *engine, sq *seq, chat bool, id string, created int64) {
	stop := context.AfterFunc(r.Context(), func() { e.abort(sq) })
	defer stop()
	var times []int64
	var b batch
	n := 0
	for {
		<-sq.notify
		b = sq.take(times)
		times = b.times
		n = b.first + len(b.times)
		if b.finish != "" {
			break
		}
	}
	if errors.Is(b.err, ErrAborted) {
		return // the client is gone
	}
	if b.err != nil {
		writeAPIError(w, engineError(b.err, s.effects(e.spec.Name), e.spec.Name))
		return
	}
	var text, thought strings.Builder
	for i := 0; i < n; i++ {
		if i == n-1 && b.finish == finishStop {
			break // EOS token has no text
		}
		t, reasoning := sq.tokenAt(i)
		if reasoning && chat {
			thought.WriteString(t)
		} else {
			text.WriteString(t)
		}
	}
	resp := completionJSON{ID: id, Object: "text_completion", Created: created, Model: e.spec.Name,
		Usage: usageJSON{PromptTokens: sq.prompt, TotalTokens: sq.prompt + n, CompletionTokens: n}}
	if r := sq.reasoningOf(n); r > 0 {
		resp.Usage.CompletionTokensDetails = &completionDetailsJSON{ReasoningTokens: r}
	}
	c := choiceJSON{FinishReason: b.finish}
	if chat {
		resp.Object = "chat.completion"
		c.Message = &messageJSON{Role: "assistant", Content: text.String(), ToolCalls: []any{}}
		if thought.Len() > 0 {
			c.Message.ReasoningContent = thought.String()
		}
	} else {
		t := text.String()
		c.Text = &t
	}
	resp.Choices = []choiceJSON{c}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// holdFor waits d (a network_delay event) before the engine sees a
// request; false when the client left first.
func holdFor(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
