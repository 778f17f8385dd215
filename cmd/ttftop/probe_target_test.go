package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// `probe 127.0.0.1:PORT` and `probe localhost:PORT` work as the dashboard
// takes them: http:// is implied.
func TestProbeURLWithoutScheme(t *testing.T) {
	hostPort := strings.TrimPrefix(cliServer(t), "http://")
	_, port, _ := strings.Cut(hostPort, ":")
	for _, target := range []string{hostPort, "localhost:" + port} {
		out, stderr, err := runCLI(t, target, "-n", "1", "--model", "m")
		if err != nil || !strings.Contains(out, "completed 1") {
			t.Errorf("probe %s: %v\nstdout %s\nstderr %s", target, err, out, stderr)
		}
	}
}

// A server that answers, but not as an LLM server does, is said to be
// reached and not to look like one: its status and a one-line excerpt of
// its page, never "cannot reach", never a raw escaped newline.
func TestProbeNonLLMServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("<!DOCTYPE HTML>\n<html lang=\"en\">\n  <head><title>Error response</title></head>\n  <body>\n    <p>Message: File not found.</p>\n  </body>\n</html>\n"))
	}))
	t.Cleanup(srv.Close)
	_, stderr, err := runCLI(t, srv.URL, "-n", "1")
	if err == nil {
		t.Fatal("probe of a web server succeeded")
	}
	for _, want := range []string{"reached " + strings.TrimPrefix(srv.URL, "http://"), "does not look like an LLM server", "HTTP 404", "(text/html)", "Message: File not found."} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, stderr)
		}
	}
	for _, not := range []string{"cannot reach", `\x0a`, "<html", "DOCTYPE"} {
		if strings.Contains(stderr, not) {
			t.Errorf("stderr says %q: %s", not, stderr)
		}
	}
}
