package probe

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRoleChunkThenDelay is the acceptance scenario of docs/definitions.md:
// a role-only chunk at once, the first text 200 ms later, then 10 tokens
// 20 ms apart, a finish-only chunk and usage 10. vLLM reports TTFT ≈ 4 ms
// and TPOT 42.9 ms here; ttftop's definitions give TTFT ≈ 200 ms and
// TPOT ≈ 20 ms.
func TestRoleChunkThenDelay(t *testing.T) {
	steps := []step{{Data: sseData(roleChunk)}, {Wait: 200 * time.Millisecond, Data: sseData(chatChunk("t0"))}}
	for i := 1; i < 10; i++ {
		steps = append(steps, step{Wait: 20 * time.Millisecond, Data: sseData(chatChunk(" t" + itoa(i)))})
	}
	steps = append(steps, step{Data: sseData(finishChunk, usageChunk(10), "[DONE]")})
	srv := server(t, scripted("text/event-stream", steps))
	r := probeOnce(t, Options{URL: srv.URL})
	if !r.OK {
		t.Fatalf("%s: %s", r.ErrorKind, r.Err)
	}
	near(t, "TTFT", r.TTFT, 200*time.Millisecond, time.Millisecond, slack)
	tpot, ok := r.TPOT()
	if !ok {
		t.Fatal("TPOT undefined")
	}
	near(t, "TPOT", tpot, 20*time.Millisecond, 10*time.Millisecond, 80*time.Millisecond)
	if want := (r.E2E - r.TTFT) / 9; tpot != want {
		t.Errorf("TPOT %v ≠ (E2E−TTFT)/(n−1) = %v", tpot, want)
	}
	if len(r.ITL()) != 9 || r.OutputTokens != 10 || r.TokensSource != TokensUsage {
		t.Errorf("itl %v n %d source %s: want 9 gaps, usage 10 (finish-only chunk is not a gap)", r.ITL(), r.OutputTokens, r.TokensSource)
	}
	if !slices.Equal(r.TokensPerEvent, ones(10)) {
		t.Errorf("tokens per event %v", r.TokensPerEvent)
	}
}

// TestMultiTokenChunks sends 4 chunks × 5 tokens, 100 ms apart after the
// first at 200 ms, with per-chunk cumulative usage: tokens per event must
// say so.
func TestMultiTokenChunks(t *testing.T) {
	chunk := func(text string, cum int) string {
		return `{"choices":[{"index":0,"delta":{"content":"` + text + `"}}],"usage":{"prompt_tokens":3,"completion_tokens":` + itoa(cum) + `}}`
	}
	steps := []step{
		{Data: sseData(roleChunk)},
		{Wait: 200 * time.Millisecond, Data: sseData(chunk("a b c d e", 5))},
		{Wait: 100 * time.Millisecond, Data: sseData(chunk(" f g h i j", 10))},
		{Wait: 100 * time.Millisecond, Data: sseData(chunk(" k l m n o", 15))},
		{Wait: 100 * time.Millisecond, Data: sseData(chunk(" p q r s t", 20), finishChunk, "[DONE]")},
	}
	srv := server(t, scripted("text/event-stream", steps))
	r := probeOnce(t, Options{URL: srv.URL})
	if !r.OK || r.OutputTokens != 20 || !slices.Equal(r.TokensPerEvent, []int{5, 5, 5, 5}) {
		t.Fatalf("ok=%v %s n=%d tokens/event %v", r.OK, r.Err, r.OutputTokens, r.TokensPerEvent)
	}
	tpot, _ := r.TPOT() // (E2E−TTFT)/19 ≈ 300/19 ms: a 5-token first chunk makes it low by 15/19
	near(t, "TPOT", tpot, 300*time.Millisecond/19, 8*time.Millisecond, 50*time.Millisecond)
	if want := (r.E2E - r.TTFT) / 19; tpot != want {
		t.Errorf("TPOT %v ≠ (E2E−TTFT)/19 = %v", tpot, want)
	}
	for i, g := range r.ITL() {
		near(t, "ITL["+itoa(i)+"]", g, 100*time.Millisecond, 50*time.Millisecond, slack)
	}
}

// TestCoalescedEvents writes two events per TCP write: both must count,
// and the pair shares an arrival time (a ~0 gap), 50 ms between pairs.
func TestCoalescedEvents(t *testing.T) {
	var steps []step
	for i := 0; i < 5; i++ {
		steps = append(steps, step{Wait: 50 * time.Millisecond, Data: sseData(chatChunk("x"+itoa(2*i)), chatChunk("x"+itoa(2*i+1)))})
	}
	steps = append(steps, step{Data: sseData(finishChunk, "[DONE]")})
	srv := server(t, scripted("text/event-stream", steps))
	r := probeOnce(t, Options{URL: srv.URL})
	if !r.OK || r.Events != 10 || !r.Approx() {
		t.Fatalf("ok=%v %s events %d approx %v", r.OK, r.Err, r.Events, r.Approx())
	}
	for i, g := range r.ITL() {
		if i%2 == 0 {
			if g > 2*time.Millisecond {
				t.Errorf("gap %d inside a coalesced pair = %v, want ≈0", i, g)
			}
		} else {
			near(t, "gap between pairs", g, 50*time.Millisecond, 25*time.Millisecond, slack)
		}
	}
}

// TestPingsBeforeFirstToken: comments, Anthropic pings and llama.cpp
// progress events before the first token do not stop TTFT.
func TestPingsBeforeFirstToken(t *testing.T) {
	t.Run("sse comments", func(t *testing.T) {
		srv := server(t, scripted("text/event-stream", []step{
			{Data: ": keep-alive\n\n"}, {Wait: 50 * time.Millisecond, Data: ":\n\n"},
			{Wait: 100 * time.Millisecond, Data: sseData(chatChunk("hi"), chatChunk(" there"), finishChunk, usageChunk(2), "[DONE]")},
		}))
		r := probeOnce(t, Options{URL: srv.URL})
		if !r.OK {
			t.Fatal(r.Err)
		}
		near(t, "TTFT", r.TTFT, 150*time.Millisecond, time.Millisecond, slack)
	})
	t.Run("anthropic ping", func(t *testing.T) {
		srv := server(t, scripted("text/event-stream", []step{
			{Data: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"},
			{Data: "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"},
			{Wait: 50 * time.Millisecond, Data: "event: ping\ndata: {\"type\": \"ping\"}\n\n"},
			{Wait: 100 * time.Millisecond, Data: "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"},
			{Data: "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"},
		}))
		r := probeOnce(t, Options{URL: srv.URL, API: Anthropic})
		if !r.OK || r.OutputTokens != 1 {
			t.Fatalf("ok=%v %s n=%d", r.OK, r.Err, r.OutputTokens)
		}
		near(t, "TTFT", r.TTFT, 150*time.Millisecond, time.Millisecond, slack)
	})
	t.Run("llamacpp progress", func(t *testing.T) {
		srv := server(t, scripted("text/event-stream", []step{
			{Data: sseData(`{"prompt_progress":{"total":9,"cache":0,"processed":4,"time_ms":10}}`)},
			{Wait: 100 * time.Millisecond, Data: sseData(`{"content":"A","tokens":[1],"stop":false,"tokens_predicted":1}`)},
			{Wait: 20 * time.Millisecond, Data: sseData(`{"content":"B","tokens":[2,3],"stop":false,"tokens_predicted":3}`)},
			{Data: sseData(`{"content":"","stop":true,"timings":{"prompt_n":9,"predicted_n":3,"predicted_ms":25}}`)},
		}))
		r := probeOnce(t, Options{URL: srv.URL, API: LlamaCpp})
		if !r.OK || r.OutputTokens != 3 || r.TokensSource != TokensEngine || !slices.Equal(r.TokensPerEvent, []int{1, 2}) {
			t.Fatalf("ok=%v %s n=%d %s %v", r.OK, r.Err, r.OutputTokens, r.TokensSource, r.TokensPerEvent)
		}
		near(t, "TTFT", r.TTFT, 100*time.Millisecond, time.Millisecond, slack)
	})
}

// TestStreamFailures covers failures that arrive inside HTTP 200.
func TestStreamFailures(t *testing.T) {
	cases := []struct {
		name  string
		api   API
		steps []step
		kind  ErrorKind
		msg   string
		warn  string // for successes: a warning that must be there
	}{
		{"error event inside 200 (vLLM)", OpenAIChat, []step{{Data: sseData(chatChunk("a"), `{"error":{"message":"boom","type":"InternalServerError","code":500}}`, "[DONE]")}}, ErrStream, "boom", ""},
		{"anthropic overloaded", Anthropic, []step{{Data: "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"}}, ErrStream, "Overloaded", ""},
		{"ollama error line", OllamaGenerate, []step{{Data: `{"model":"m","response":"a","done":false}` + "\n" + `{"error":"out of memory"}` + "\n"}}, ErrStream, "out of memory", ""},
		{"tgi incomplete generation", TGI, []step{{Data: "data:{\"error\":\"Request failed during generation\",\"error_type\":\"incomplete_generation\"}\n\n"}}, ErrStream, "incomplete_generation", ""},
		{"no [DONE] and no finish", OpenAIChat, []step{{Data: sseData(chatChunk("a"), chatChunk("b"))}}, ErrTruncated, "terminal", ""},
		{"ollama without done", OllamaChat, []step{{Data: `{"model":"m","message":{"role":"assistant","content":"a"},"done":false}` + "\n"}}, ErrTruncated, "", ""},
		{"invalid JSON", OpenAIChat, []step{{Data: sseData(chatChunk("a"), `{"choices":[{"delta":{"content":"b"`, "[DONE]")}}, ErrInvalidEvent, "event 2", ""},
		{"no output text", OpenAIChat, []step{{Data: sseData(roleChunk, finishChunk, usageChunk(0), "[DONE]")}}, ErrNoOutput, "", ""},
		{"finish without [DONE] is complete", OpenAIChat, []step{{Data: sseData(chatChunk("a"), chatChunk("b"), finishChunk)}}, "", "", "without its terminal event"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ct := "text/event-stream"
			if c.api == OllamaGenerate || c.api == OllamaChat {
				ct = "application/x-ndjson"
			}
			srv := server(t, scripted(ct, c.steps))
			r := probeOnce(t, Options{URL: srv.URL, API: c.api})
			if c.kind == "" {
				if !r.OK || !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, c.warn) }) {
					t.Fatalf("ok=%v %s warnings %q", r.OK, r.Err, r.Warnings)
				}
				return
			}
			if r.OK || r.ErrorKind != c.kind || !strings.Contains(r.Err, c.msg) {
				t.Fatalf("ok=%v kind %q err %q, want %q containing %q", r.OK, r.ErrorKind, r.Err, c.kind, c.msg)
			}
			if r.TTFT != 0 || len(r.ITL()) != 0 {
				t.Errorf("failure kept latencies")
			}
		})
	}
}

// TestHTTPErrors: status, sanitised and truncated body, JSON error bodies.
func TestHTTPErrors(t *testing.T) {
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("case") {
		case "json":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"object":"error","message":"The model ` + "`x`" + ` does not exist.","type":"NotFoundError","code":404}`))
		case "json200":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"error":{"message":"stream not supported"}}`))
		default:
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte("\x1b[31mfail\x1b[0m " + strings.Repeat("x", 5000)))
		}
	}))
	r := probeOnce(t, Options{URL: srv.URL + "/v1/chat/completions?case=big"})
	if r.ErrorKind != ErrHTTPStatus || r.Status != 500 || strings.Contains(r.Err, "\x1b") || len(r.Err) > 600 || !strings.Contains(r.Err, `\x1b[31mfail`) {
		t.Errorf("kind %q status %d err %q (len %d)", r.ErrorKind, r.Status, r.Err, len(r.Err))
	}
	r = probeOnce(t, Options{URL: srv.URL + "/v1/chat/completions?case=json"})
	if r.ErrorKind != ErrHTTPStatus || r.Err != "HTTP 404: The model `x` does not exist." {
		t.Errorf("kind %q err %q", r.ErrorKind, r.Err)
	}
	r = probeOnce(t, Options{URL: srv.URL + "/v1/chat/completions?case=json200"})
	if r.ErrorKind != ErrStream || !strings.Contains(r.Err, "stream not supported") {
		t.Errorf("kind %q err %q", r.ErrorKind, r.Err)
	}
}

// TestLongLines: a 1 MiB event (past bufio.Scanner's 64 KiB) works; a
// 20 MiB line fails cleanly under the default 16 MiB cap.
func TestLongLines(t *testing.T) {
	big := strings.Repeat("y", 1<<20)
	srv := server(t, scripted("text/event-stream", []step{{Data: sseData(chatChunk(big), chatChunk("z"), finishChunk, "[DONE]")}}))
	if r := probeOnce(t, Options{URL: srv.URL}); !r.OK || r.Events != 2 {
		t.Errorf("1 MiB event: ok=%v %s events %d", r.OK, r.Err, r.Events)
	}
	huge := "data: " + strings.Repeat("a", 20<<20) + "\n\n"
	srv = server(t, scripted("text/event-stream", []step{{Data: sseData(chatChunk("a"))}, {Data: huge}}))
	r := probeOnce(t, Options{URL: srv.URL})
	if r.ErrorKind != ErrLineTooLong || !strings.Contains(r.Err, "16777216") {
		t.Errorf("20 MiB line: kind %q err %q", r.ErrorKind, r.Err)
	}
}

// TestGzipAnyway: a server that compresses although asked for identity.
func TestGzipAnyway(t *testing.T) {
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "identity" {
			t.Errorf("Accept-Encoding %q", r.Header.Get("Accept-Encoding"))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		for _, ev := range []string{chatChunk("a"), chatChunk("b"), finishChunk, usageChunk(2), "[DONE]"} {
			_, _ = gz.Write([]byte(sseData(ev)))
			_ = gz.Flush()
			flush(w)
			time.Sleep(10 * time.Millisecond)
		}
		_ = gz.Close()
	}))
	r := probeOnce(t, Options{URL: srv.URL})
	if !r.OK || r.OutputTokens != 2 || !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "compressed") }) {
		t.Errorf("ok=%v %s n=%d warnings %q", r.OK, r.Err, r.OutputTokens, r.Warnings)
	}
}

// TestStallAndTimeout: silence after the first token is a stall; a
// stream that trickles forever hits the request timeout.
func TestStallAndTimeout(t *testing.T) {
	srv := server(t, scripted("text/event-stream", []step{{Data: sseData(chatChunk("a"))}, {Wait: 10 * time.Second, Data: sseData("[DONE]")}}))
	// The stall's kind and words say its timer fired (the server would
	// have finished the stream after 10 s), whatever this machine's pace.
	r := probeOnce(t, Options{URL: srv.URL, StallTimeout: 300 * time.Millisecond})
	if r.ErrorKind != ErrStall || !strings.Contains(r.Err, "no event within the stall timeout") {
		t.Errorf("kind %q err %q", r.ErrorKind, r.Err)
	}
	var steps []step
	for range 200 {
		steps = append(steps, step{Wait: 50 * time.Millisecond, Data: sseData(chatChunk("a"))})
	}
	srv = server(t, scripted("text/event-stream", steps))
	r = probeOnce(t, Options{URL: srv.URL, Timeout: 400 * time.Millisecond, StallTimeout: 5 * time.Second})
	if r.ErrorKind != ErrTimeout {
		t.Errorf("kind %q err %q, want timeout", r.ErrorKind, r.Err)
	}
}

// rawServer accepts one connection on loopback, reads the request line
// and hands the connection to serve; it returns the address. Cleanup
// closes the listener and waits for serve.
func rawServer(t *testing.T, serve func(conn net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Go(func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer func() { _ = conn.Close() }()
		_, _ = bufio.NewReader(conn).ReadString('\n')
		serve(conn)
	})
	return ln.Addr().String()
}

// TestSlowLorisHeaders: headers trickled a byte at a time never complete
// within the stall timeout: bytes alone do not count as progress.
func TestSlowLorisHeaders(t *testing.T) {
	addr := rawServer(t, func(conn net.Conn) {
		for _, b := range []byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Slow: " + strings.Repeat("z", 200)) {
			if _, err := conn.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	// The stall's kind and words say its timer fired (the trickle ends
	// after about 5 s with headers never complete, another error).
	r := probeOnce(t, Options{URL: "http://" + addr, StallTimeout: 400 * time.Millisecond})
	if r.ErrorKind != ErrStall || !strings.Contains(r.Err, "no response headers within the stall timeout") {
		t.Errorf("kind %q err %q", r.ErrorKind, r.Err)
	}
}

// TestSilentServer: a server that accepts and reads the request but never
// answers (stopped with kill -STOP) is said as such, not as a stream that
// stopped mid-answer.
func TestSilentServer(t *testing.T) {
	release := make(chan struct{})
	addr := rawServer(t, func(net.Conn) { <-release })
	t.Cleanup(func() { close(release) }) // registered after rawServer's, so it runs first: the handler ends
	r := probeOnce(t, Options{URL: "http://" + addr, StallTimeout: 300 * time.Millisecond})
	if r.ErrorKind != ErrStall || !strings.Contains(r.Err, "no response headers within the stall timeout") {
		t.Errorf("kind %q err %q", r.ErrorKind, r.Err)
	}
}

// TestConnectFailures: refused connection, unknown host.
func TestConnectFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	if r := probeOnce(t, Options{URL: "http://" + addr}); r.ErrorKind != ErrConnect {
		t.Errorf("refused: kind %q err %q", r.ErrorKind, r.Err)
	}
	if r := probeOnce(t, Options{URL: "http://ttftop-probe-test.invalid:8000", Timeout: 10 * time.Second}); r.ErrorKind != ErrDNS {
		t.Errorf("dns: kind %q err %q", r.ErrorKind, r.Err)
	}
}

// TestTLS: an unknown CA fails with kind tls; --ca-file makes it pass;
// --insecure passes and is marked on the endpoint.
func TestTLS(t *testing.T) {
	srv := httptest.NewTLSServer(scripted("text/event-stream", []step{{Data: sseData(chatChunk("a"), chatChunk("b"), finishChunk, "[DONE]")}}))
	t.Cleanup(srv.Close)
	if r := probeOnce(t, Options{URL: srv.URL}); r.ErrorKind != ErrTLS {
		t.Fatalf("unknown CA: kind %q err %q", r.ErrorKind, r.Err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := probeOnce(t, Options{URL: srv.URL, Auth: Auth{CAFile: caFile}}); !r.OK || r.TLS <= 0 {
		t.Fatalf("with CA file: ok=%v %s tls %v", r.OK, r.Err, r.TLS)
	}
	p, err := New(Options{URL: srv.URL, Model: "m", Auth: Auth{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if r := p.Do(context.Background(), nil); !r.OK {
		t.Fatalf("insecure: %s", r.Err)
	}
	if p.Endpoint().Labels["tls"] != "NOT VERIFIED" {
		t.Errorf("insecure endpoint not marked: %v", p.Endpoint().Labels)
	}
}

// TestCanceled: shutting down mid-stream is "canceled", not a failure of
// the endpoint.
func TestCanceled(t *testing.T) {
	srv := server(t, scripted("text/event-stream", []step{{Data: sseData(chatChunk("a"))}, {Wait: 5 * time.Second, Data: sseData("[DONE]")}}))
	p, err := New(Options{URL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if r := p.Do(ctx, nil); r.ErrorKind != ErrCanceled {
		t.Errorf("kind %q err %q", r.ErrorKind, r.Err)
	}
}

// TestNotAStream: a 200 answer that is not an event stream (a proxy's
// login page) is an invalid answer, not a truncated stream.
func TestNotAStream(t *testing.T) {
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>Please log in</body></html>\n"))
	}))
	if r := probeOnce(t, Options{URL: srv.URL}); r.ErrorKind != ErrInvalidEvent || !strings.Contains(r.Err, "text/html") {
		t.Errorf("kind %q err %q", r.ErrorKind, r.Err)
	}
}

// TestStreamCutBeforeAnyEvent: a 200 event stream whose connection is cut
// before its first event (a proxy aborting: the chunked body ends with
// no terminator, unexpected EOF) is a broken stream, not an answer that
// holds no events.
func TestStreamCutBeforeAnyEvent(t *testing.T) {
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		flush(w)
		panic(http.ErrAbortHandler) // as httputil.ReverseProxy does when its upstream read fails
	}))
	r := probeOnce(t, Options{URL: srv.URL})
	if r.ErrorKind != ErrTruncated || !strings.Contains(r.Err, "stream broken") || !strings.Contains(r.Err, "unexpected EOF") {
		t.Errorf("kind %q err %q; want truncated: stream broken: unexpected EOF", r.ErrorKind, r.Err)
	}
}
