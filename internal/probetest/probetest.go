// Package probetest serves scripted OpenAI-style streams for the tests of
// the probe and of the commands that drive it: one copy of the servers and
// chunk builders both use.
package probetest

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Step is one write of a scripted server: wait, then write and flush.
type Step struct {
	Wait time.Duration
	Data string
}

// Scripted serves the steps as a stream body (one write + flush each)
// and stops early when the client goes away.
func Scripted(contentType string, steps []Step) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		flush(w)
		for _, s := range steps {
			if s.Wait > 0 {
				select {
				case <-time.After(s.Wait):
				case <-r.Context().Done():
					return
				}
			}
			if _, err := w.Write([]byte(s.Data)); err != nil {
				return
			}
			flush(w)
		}
	}
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// Server starts an httptest server answering POSTs with h and GET
// /v1/models with one model "m" owned by "vllm"; it closes with the test.
func Server(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm"}]}`))
	})
	mux.Handle("POST /", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// SSEData frames payloads as OpenAI-style events.
func SSEData(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: " + p + "\n\n")
	}
	return b.String()
}

// ChatChunk is a chat completion chunk carrying content.
func ChatChunk(content string) string {
	return `{"object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":` + Quote(content) + `},"finish_reason":null}]}`
}

// ReasoningChunk is a chat completion chunk carrying reasoning_content.
func ReasoningChunk(text string) string {
	return `{"object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"reasoning_content":` + Quote(text) + `},"finish_reason":null}]}`
}

// Quote is s as a JSON string, control characters escaped.
func Quote(s string) string {
	b := strings.Builder{}
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// The role-only first chunk and the finishing chunk of a chat stream.
const (
	RoleChunk   = `{"object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`
	FinishChunk = `{"object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
)

// UsageChunk is the usage-only chunk counting n completion tokens.
func UsageChunk(n int) string {
	return `{"object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":` + strconv.Itoa(n) + `,"total_tokens":` + strconv.Itoa(n+7) + `}}`
}

// ReasoningServer streams 3 reasoning chunks then 3 content chunks, 20 ms
// apart, and a usage chunk counting 8 tokens of which 4 reasoning
// (OpenAI's completion_tokens_details); it returns the server's URL.
func ReasoningServer(t *testing.T) string {
	t.Helper()
	return ReasoningServerEvery(t, 20*time.Millisecond)
}

// ReasoningServerEvery is ReasoningServer with its chunks gap apart: a
// test that tells figures apart by a few ms gives them room over the
// scheduling delays of a loaded machine.
func ReasoningServerEvery(t *testing.T, gap time.Duration) string {
	t.Helper()
	steps := []Step{{Data: SSEData(RoleChunk)}}
	for i := range 3 {
		steps = append(steps, Step{Wait: gap, Data: SSEData(ReasoningChunk("r" + strconv.Itoa(i)))})
	}
	for i := range 3 {
		steps = append(steps, Step{Wait: gap, Data: SSEData(ChatChunk("a" + strconv.Itoa(i)))})
	}
	steps = append(steps, Step{Data: SSEData(FinishChunk,
		`{"object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":8,"total_tokens":15,"completion_tokens_details":{"reasoning_tokens":4}}}`,
		"[DONE]")})
	return Server(t, Scripted("text/event-stream", steps)).URL
}
