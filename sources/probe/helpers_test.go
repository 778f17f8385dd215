package probe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tokentop/tokentop/internal/fixtures"
	"github.com/tokentop/tokentop/telemetry/telemetrytest"
)

// fixtureDir is the repository's stream captures.
func fixtureDir(t *testing.T) string {
	t.Helper()
	return fixtures.Dir(t, "streams")
}

// step is one write of a scripted server: wait, then write and flush.
type step struct {
	wait time.Duration
	data string
}

// scripted serves the steps as a stream body (one write + flush each)
// and stops early when the client goes away.
func scripted(contentType string, steps []step) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		flush(w)
		for _, s := range steps {
			if s.wait > 0 {
				select {
				case <-time.After(s.wait):
				case <-r.Context().Done():
					return
				}
			}
			if _, err := w.Write([]byte(s.data)); err != nil {
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

// server starts an httptest server answering POSTs with h and GET
// /v1/models with one model owned by "vllm".
func server(t *testing.T, h http.Handler) *httptest.Server {
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

// probeOnce runs one request against url with opts (model "m").
func probeOnce(t *testing.T, opts Options) *Result {
	t.Helper()
	if opts.Model == "" {
		opts.Model = "m"
	}
	p, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.Do(ctx, nil)
}

// sseData frames payloads as OpenAI-style events.
func sseData(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: " + p + "\n\n")
	}
	return b.String()
}

func chatChunk(content string) string {
	return `{"object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":` + quote(content) + `},"finish_reason":null}]}`
}

func quote(s string) string {
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

const (
	roleChunk   = `{"object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`
	finishChunk = `{"object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
)

func usageChunk(n int) string {
	return `{"object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":` + itoa(n) + `,"total_tokens":` + itoa(n+7) + `}}`
}

func itoa(n int) string { return strconv.Itoa(n) }

// collector keeps every observation (a concurrency-safe Sink).
type collector = telemetrytest.Collector

// slack is the upper timing margin: on a loaded shared machine delays
// only ever add, and load averages of 10 on 2 cores have been seen.
const slack = 600 * time.Millisecond

// near checks d is within [want−below, want+above]: timing on a noisy
// shared machine only ever runs late, so the upper margin is the wide one.
func near(t *testing.T, what string, d, want, below, above time.Duration) {
	t.Helper()
	if d < want-below || d > want+above {
		t.Errorf("%s = %v, want %v (−%v/+%v)", what, d, want, below, above)
	}
}
