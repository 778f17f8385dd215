//go:build integration

package failuresuite

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// misbehaviour is how a fake OpenAI-compatible server fails.
type misbehaviour int

const (
	// silent accepts the request and never answers: no status, no byte.
	silent misbehaviour = iota
	// midStream answers 200, sends the role chunk and one token, then
	// nothing more while keeping the connection open.
	midStream
	// heartbeatOnly answers 200 and sends an SSE comment every 500 ms but
	// never a token: alive to a proxy, useless to a user.
	heartbeatOnly
	// slowTokens streams every token tokenGap apart: a complete answer,
	// far slower than any TPOT objective.
	slowTokens
	// prompt streams its tokens at once: a healthy gateway, which like
	// every fake here has no /metrics (404).
	prompt
)

// tokenGap is the slow server's time per output token.
const tokenGap = 300 * time.Millisecond

// fakeModel is the one model every fake serves.
const fakeModel = "m"

// fakeServer is a tiny loopback HTTP server speaking just enough of the
// OpenAI API (/v1/models, streaming /v1/chat/completions) to misbehave.
type fakeServer struct {
	url      string
	requests atomic.Int64
}

// startFake starts a fake that misbehaves as b. Its handlers end when
// the client gives up or the test ends.
func startFake(t *testing.T, b misbehaviour) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	done := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if _, err := fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model","owned_by":"test"}]}`, fakeModel); err != nil {
			return // the client left; nothing to tell it
		}
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		var req struct {
			MaxTokens int `json:"max_tokens"`
			MaxComp   int `json:"max_completion_tokens"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
			return
		}
		n := max(req.MaxTokens, req.MaxComp, 1)
		f.serve(w, r, b, n, done)
	})
	srv := httptest.NewServer(mux) // 127.0.0.1, a free port
	t.Cleanup(func() {
		close(done)
		srv.CloseClientConnections()
		srv.Close()
	})
	f.url = srv.URL
	return f
}

// wait blocks for d, or until the client leaves or the test ends;
// false means stop.
func wait(r *http.Request, done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-done:
		return false
	}
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request, b misbehaviour, n int, done <-chan struct{}) {
	if b == silent {
		select {
		case <-r.Context().Done():
		case <-done:
		}
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "no flusher", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(s string) bool {
		if _, err := io.WriteString(w, s); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	chunk := func(delta, finish string) string {
		fin := "null"
		if finish != "" {
			fin = fmt.Sprintf("%q", finish)
		}
		return fmt.Sprintf(`data: {"id":"fake","object":"chat.completion.chunk","created":1,"model":%q,"choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n",
			fakeModel, delta, fin)
	}
	if !send(chunk(`{"role":"assistant","content":""}`, "")) {
		return
	}
	switch b {
	case midStream:
		if !send(chunk(`{"content":" hello"}`, "")) {
			return
		}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	case heartbeatOnly:
		for wait(r, done, 500*time.Millisecond) {
			if !send(": keep-alive\n\n") {
				return
			}
		}
	case slowTokens, prompt:
		for i := range n {
			if b == slowTokens && !wait(r, done, tokenGap) {
				return
			}
			finish := ""
			if i == n-1 {
				finish = "length"
			}
			if !send(chunk(`{"content":" tok"}`, finish)) {
				return
			}
		}
		if !send("data: [DONE]\n\n") {
			return
		}
	}
}

// webhookSink is a loopback webhook that answers every request with one
// status (405: the wrong URL for a push) and counts the attempts.
type webhookSink struct {
	url      string
	requests atomic.Int64
}

func startWebhookSink(t *testing.T, status int) *webhookSink {
	t.Helper()
	s := &webhookSink{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if _, err := io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20)); err != nil {
			return
		}
		http.Error(w, http.StatusText(status), status)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL + "/api/v2/alerts"
	return s
}
