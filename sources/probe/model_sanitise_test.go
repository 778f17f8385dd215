package probe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/sanitize"
)

// hostileModel is a model id that, printed raw, would retitle the terminal,
// clear the screen and ring the bell.
const hostileModel = "evil\x1b]0;pwned\x07\x1b[2J\x1b[31mred\u009b1m\u202e"

func assertInert(t *testing.T, what, got string) {
	t.Helper()
	if got != sanitize.Text(hostileModel) {
		t.Errorf("%s = %q, want the sanitised %q", what, got, sanitize.Text(hostileModel))
	}
	if strings.ContainsAny(got, "\x1b\x07\u009b\u202e") {
		t.Errorf("%s %q still holds escape or control characters", what, got)
	}
}

// The model id a stream reports is network text: it reaches the result (and
// from there the table and the recordings) sanitised.
func TestStreamedModelIDIsSanitised(t *testing.T) {
	chunk := func(content string) string {
		return `{"object":"chat.completion.chunk","model":` + quote(hostileModel) + `,"choices":[{"index":0,"delta":{"content":` + quote(content) + `},"finish_reason":null}]}`
	}
	srv := server(t, scripted("text/event-stream", []step{{Data: sseData(chunk("a"), chunk("b"), finishChunk, "[DONE]")}}))
	r := probeOnce(t, Options{URL: srv.URL})
	if !r.OK {
		t.Fatalf("probe failed: %s %s", r.ErrorKind, r.Err)
	}
	assertInert(t, "streamed model", r.Model)
}

// The models list is network text too: discovery picks the hostile id and
// both the listed id and the prober's model come back sanitised.
func TestListedModelIDIsSanitised(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":` + quote(hostileModel) + `,"object":"model","owned_by":` + quote(hostileModel) + `}]}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p, err := New(Options{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	models, err := p.Discover(ctx)
	if err != nil || len(models) != 1 {
		t.Fatalf("Discover: %v, %d models", err, len(models))
	}
	assertInert(t, "listed id", models[0].ID)
	assertInert(t, "owned_by", models[0].OwnedBy)
	assertInert(t, "chosen model", p.Model())
}
