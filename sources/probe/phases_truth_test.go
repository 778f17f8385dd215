package probe

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// truthStream is one protocol's reasoning → answer → tool-call stream, as
// the server writes it: each event is flushed on its own, and the server
// notes the instant it began writing the first answer event and the first
// tool event, the ground truth of TTFA and of the time to the first tool
// call.
type truthStream struct {
	api      API
	path     string
	ct       string
	frame    func(event, data string) string
	thinking func(i int) (event, data string)
	answer   func(i int) (event, data string)
	tool     func(i int) (event, data string)
	finish   []string // framed events after the last token
}

func sse(event, data string) string {
	if event != "" {
		return "event: " + event + "\ndata: " + data + "\n\n"
	}
	return "data: " + data + "\n\n"
}

func ndjson(_, data string) string { return data + "\n" }

func truthStreams() []truthStream {
	return []truthStream{
		{api: OpenAIChat, path: "/v1/chat/completions", ct: "text/event-stream", frame: sse,
			thinking: func(i int) (string, string) { return "", reasoningChunk("r" + itoa(i)) },
			answer:   func(i int) (string, string) { return "", chatChunk("a" + itoa(i)) },
			tool: func(i int) (string, string) {
				return "", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"k` + itoa(i) + `\""}}]}}]}`
			},
			finish: []string{sse("", finishChunk), sse("", `{"choices":[],"usage":{"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":3}}}`), sse("", "[DONE]")}},
		{api: OpenAIResponses, path: "/v1/responses", ct: "text/event-stream", frame: sse,
			thinking: func(i int) (string, string) {
				return "response.reasoning_text.delta", `{"type":"response.reasoning_text.delta","delta":"r` + itoa(i) + `"}`
			},
			answer: func(i int) (string, string) {
				return "response.output_text.delta", `{"type":"response.output_text.delta","delta":"a` + itoa(i) + `"}`
			},
			tool: func(i int) (string, string) {
				return "response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","delta":"{` + itoa(i) + `"}`
			},
			finish: []string{sse("response.completed", `{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":5,"output_tokens":9,"output_tokens_details":{"reasoning_tokens":3}}}}`)}},
		{api: Anthropic, path: "/v1/messages", ct: "text/event-stream", frame: sse,
			thinking: func(i int) (string, string) {
				return "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"r` + itoa(i) + `"}}`
			},
			answer: func(i int) (string, string) {
				return "content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"a` + itoa(i) + `"}}`
			},
			tool: func(i int) (string, string) {
				return "content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{` + itoa(i) + `"}}`
			},
			finish: []string{sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9,"output_tokens_details":{"thinking_tokens":3}}}`),
				sse("message_stop", `{"type":"message_stop"}`)}},
		{api: OllamaChat, path: "/api/chat", ct: "application/x-ndjson", frame: ndjson,
			thinking: func(i int) (string, string) {
				return "", `{"model":"m","message":{"role":"assistant","content":"","thinking":"r` + itoa(i) + `"},"done":false}`
			},
			answer: func(i int) (string, string) {
				return "", `{"model":"m","message":{"role":"assistant","content":"a` + itoa(i) + `"},"done":false}`
			},
			tool: func(i int) (string, string) {
				return "", `{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{"k":` + itoa(i) + `}}}]},"done":false}`
			},
			finish: []string{`{"model":"m","message":{"role":"assistant","content":""},"done":true,"eval_count":9,"prompt_eval_count":5,"prompt_eval_duration":1000000,"eval_duration":9000000}` + "\n"}},
	}
}

// flushTimes are the server's ground truth per request id.
type flushTimes struct {
	mu           sync.Mutex
	answer, tool map[string]time.Time
}

// truthHandler writes 3 reasoning, 3 answer and 3 tool events, gap apart,
// each flushed alone, and notes when the first answer and tool events
// were flushed.
func truthHandler(s truthStream, gap time.Duration, ft *flushTimes, ids *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := strconv.FormatInt(ids.Add(1), 10)
		w.Header().Set("Content-Type", s.ct)
		w.Header().Set("X-Request-Id", id)
		w.WriteHeader(http.StatusOK)
		flush(w)
		// written is when the last event's write began: no client can
		// have read it earlier, so it is the event's ground truth.
		var written time.Time
		write := func(ev, data string) bool {
			time.Sleep(gap) // pacing, not synchronisation
			written = time.Now()
			if _, err := w.Write([]byte(s.frame(ev, data))); err != nil {
				return false
			}
			flush(w)
			return true
		}
		for i := range 3 {
			if !write(s.thinking(i)) {
				return
			}
		}
		for i := range 3 {
			if !write(s.answer(i)) {
				return
			}
			if i == 0 {
				ft.mu.Lock()
				ft.answer[id] = written
				ft.mu.Unlock()
			}
		}
		for i := range 3 {
			if !write(s.tool(i)) {
				return
			}
			if i == 0 {
				ft.mu.Lock()
				ft.tool[id] = written
				ft.mu.Unlock()
			}
		}
		for _, f := range s.finish {
			if _, err := w.Write([]byte(f)); err != nil {
				return
			}
		}
		flush(w)
	}
}

// TestTTFAGroundTruth: in every protocol with reasoning and tool calls,
// at 1 and at 200 concurrent streams (events 20 ms apart), the probe
// splits the phases right and stamps TTFA and the first tool call no
// earlier than the server began writing those events. How close the
// stamps come is a measurement, not a pass/fail bound on a shared
// machine: BenchmarkTTFAGroundTruth reports it.
func TestTTFAGroundTruth(t *testing.T) {
	for _, streams := range []int{1, 200} {
		for _, s := range truthStreams() {
			t.Run(fmt.Sprintf("%s/%d", s.api, streams), func(t *testing.T) {
				t.Parallel() // no timing is judged: the streams' waits overlap
				ansErr, toolErr := measureTTFA(t, s, streams)
				if lo := min(slices.Min(ansErr), slices.Min(toolErr)); lo < 0 {
					t.Errorf("a stamp %.3f ms before the server wrote the event", lo)
				}
			})
		}
	}
}

// BenchmarkTTFAGroundTruth reports, per protocol at 200 concurrent
// streams, how far the probe's TTFA and first-tool stamps fall after the
// server began writing those events (median and p99 |error|, ms):
//
//	go test ./sources/probe -run '^$' -bench TTFAGroundTruth -benchtime 1x
//
// A loaded 2-core machine measured a 5.1 ms median; the events are 20 ms
// apart, so a median near 10 ms would mean the wrong event is stamped.
func BenchmarkTTFAGroundTruth(b *testing.B) {
	for _, s := range truthStreams() {
		b.Run(string(s.api), func(b *testing.B) {
			var ansErr, toolErr []float64
			for b.Loop() {
				a, t := measureTTFA(b, s, 200)
				ansErr, toolErr = append(ansErr, abs(a)...), append(toolErr, abs(t)...)
			}
			b.ReportMetric(telemetry.SampleQuantile(0.5, ansErr), "ttfa-err-median-ms")
			b.ReportMetric(telemetry.SampleQuantile(0.99, ansErr), "ttfa-err-p99-ms")
			b.ReportMetric(telemetry.SampleQuantile(0.5, toolErr), "tool-err-median-ms")
			b.ReportMetric(telemetry.SampleQuantile(0.99, toolErr), "tool-err-p99-ms")
		})
	}
}

func abs(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = max(x, -x)
	}
	return out
}

// measureTTFA runs max(streams, 5) requests, streams at a time, against
// truthHandler and returns each request's TTFA and first-tool error (ms):
// the probe's stamp (first byte of the event read) − the instant the
// server began writing it, on one monotonic clock; it includes the write
// and flush themselves. A failed request or a wrong phase split fails tb.
func measureTTFA(tb testing.TB, s truthStream, streams int) (ansErr, toolErr []float64) {
	tb.Helper()
	ft := &flushTimes{answer: map[string]time.Time{}, tool: map[string]time.Time{}}
	var ids atomic.Int64
	srv := server(tb, truthHandler(s, 20*time.Millisecond, ft, &ids))
	p, err := New(Options{URL: srv.URL + s.path, API: s.api, Model: "m", Concurrency: streams,
		Limits: Limits{MaxConcurrency: streams, MaxPerMinute: 60000}})
	if err != nil {
		tb.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	results := make([]*Result, max(streams, 5))
	var wg sync.WaitGroup
	sem := make(chan struct{}, streams)
	for i := range results {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = p.Do(ctx, nil)
		})
	}
	wg.Wait()
	ft.mu.Lock()
	defer ft.mu.Unlock()
	for _, r := range results {
		if !r.OK {
			tb.Fatalf("%s: %s", r.ErrorKind, r.Err)
		}
		ph := r.Phases()
		if !ph.HasAnswer || !ph.HasTool || !ph.Split || ph.Reasoning != 3 || ph.Answer != 6 || ph.Approx() {
			tb.Fatalf("phases %+v", ph)
		}
		ans, tool := ft.answer[r.RequestID], ft.tool[r.RequestID]
		if ans.IsZero() || tool.IsZero() {
			tb.Fatalf("no flush time for request %q", r.RequestID)
		}
		ansErr = append(ansErr, float64(r.Start.Add(ph.TTFA).Sub(ans))/1e6)
		toolErr = append(toolErr, float64(r.Start.Add(ph.FirstTool).Sub(tool))/1e6)
	}
	return ansErr, toolErr
}
