package probetest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// SecretToken is the API key the secret tests send; no output may hold
// it, nor its middle (SecretPart), which survives a shortened copy.
const (
	SecretToken = "sk-TOPSECRET-4f9a1c"
	SecretPart  = "TOPSECRET"
)

// EchoServer echoes the Authorization header everywhere a server can:
// model ids, streamed text, error events (?case=event) and error bodies
// (?case=401). It fails the test if a chat request does not carry
// SecretToken as its bearer token.
func EchoServer(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintf(w, `{"data":[{"id":"m-%s","owned_by":"vllm"},{"id":"other","owned_by":"vllm"}]}`, r.Header.Get("Authorization"))
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if auth != "Bearer "+SecretToken {
			t.Errorf("Authorization %q", auth)
		}
		switch r.URL.Query().Get("case") {
		case "401":
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = fmt.Fprintf(w, "bad key %s; headers: %v", auth, r.Header)
		case "event":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(SSEData(ChatChunk("a"), `{"error":{"message":"rejected `+auth+`"}}`, "[DONE]")))
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("X-Request-Id", auth)
			_, _ = w.Write([]byte(SSEData(RoleChunk, ChatChunk("you sent "+auth), ChatChunk(" ok"), FinishChunk, UsageChunk(4), "[DONE]")))
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// NoSecret fails the test if out holds SecretToken or SecretPart, naming
// what wrote it, then empties out for the next check.
func NoSecret(t testing.TB, what string, out *bytes.Buffer) {
	t.Helper()
	if strings.Contains(out.String(), SecretToken) {
		t.Fatalf("%s leaks the token:\n%s", what, out.String())
	}
	if strings.Contains(out.String(), SecretPart) {
		t.Fatalf("%s leaks part of the token:\n%s", what, out.String())
	}
	out.Reset()
}
