package main

// Tests of the probe command: its flags and its outputs (table, JSON,
// JSONL, CSV) against scripted streaming servers. The stream helpers are
// copies of sources/probe's test helpers, which a test in another package
// cannot import.

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/probetest"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// The scripted servers and chat chunks are internal/probetest's, shared
// with the command's tests.
type step = probetest.Step

var (
	scripted   = probetest.Scripted
	server     = probetest.Server
	sseData    = probetest.SSEData
	chatChunk  = probetest.ChatChunk
	usageChunk = probetest.UsageChunk
)

const (
	roleChunk   = probetest.RoleChunk
	finishChunk = probetest.FinishChunk
)

func itoa(n int) string { return strconv.Itoa(n) }

// slack is the upper timing margin: on a loaded shared machine delays
// only ever add, and load averages of 10 on 2 cores have been seen.
const slack = 600 * time.Millisecond

func partsByName(parts []telemetry.ProbePart) map[string]telemetry.ProbePart {
	out := map[string]telemetry.ProbePart{}
	for _, p := range parts {
		out[p.Part] = p
	}
	return out
}

func cliServer(t *testing.T) string {
	steps := []step{{Data: sseData(roleChunk)}}
	for i := range 4 {
		steps = append(steps, step{Wait: 5 * time.Millisecond, Data: sseData(chatChunk("w" + itoa(i)))})
	}
	steps = append(steps, step{Data: sseData(finishChunk, usageChunk(4), "[DONE]")})
	return server(t, scripted("text/event-stream", steps)).URL
}

func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := probeCommandLine(ctx, args, &stdout, &stderr)
	if err != nil {
		err = fmt.Errorf("%w: %s", err, stderr.String()) // what it said is the error
	}
	return stdout.String(), stderr.String(), err
}

// probeCommandLine runs `ttftop probe args...` as main does; a non-zero
// exit is an error.
func probeCommandLine(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if code := run(ctx, append([]string{"probe"}, args...), stdout, stderr); code != 0 {
		return fmt.Errorf("exit %d", code)
	}
	return nil
}

func TestCLIJSON(t *testing.T) {
	url := cliServer(t)
	out, stderr, err := runCLI(t, url, "-n", "3", "-c", "2", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	for _, k := range []string{"schema", "completed", "failed", "output_tokens_per_s", "duration_ms", "total_output_tokens"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("summary lacks %q", k)
		}
	}
	for _, m := range []string{"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"} {
		for _, s := range []string{"mean_", "median_", "p90_", "p95_", "p99_"} {
			if v, ok := doc[s+m].(float64); !ok || v <= 0 {
				t.Errorf("%s%s = %v", s, m, doc[s+m])
			}
		}
	}
	if doc["completed"] != 3.0 || doc["failed"] != 0.0 {
		t.Errorf("completed %v failed %v", doc["completed"], doc["failed"])
	}
	reqs, _ := doc["requests"].([]any)
	if len(reqs) != 3 {
		t.Fatalf("requests %v", doc["requests"])
	}
	r0 := reqs[0].(map[string]any)
	for _, k := range []string{"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "output_tokens", "output_tokens_source",
		"prompt_tokens", "tokens_per_event", "connect_ms", "ttfb_ms"} {
		if _, ok := r0[k]; !ok {
			t.Errorf("request lacks %q: %v", k, r0)
		}
	}
	if r0["output_tokens_source"] != "usage" || len(r0["itl_ms"].([]any)) != 3 || r0["request"] != 1.0 {
		t.Errorf("request %v", r0)
	}
}

func TestCLIJSONL(t *testing.T) {
	out, _, err := runCLI(t, cliServer(t), "-n", "3", "--jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 3 requests + 1 summary:\n%s", len(lines), out)
	}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if _, isSummary := m["summary"]; isSummary != (i == 3) {
			t.Errorf("line %d summary flag %v", i, m["summary"])
		}
	}
}

func TestCLICSV(t *testing.T) {
	out, _, err := runCLI(t, cliServer(t), "-n", "2", "--csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 3 || !slices.Equal(rows[0], probeCSVHeader()) {
		t.Fatalf("rows %v err %v", rows, err)
	}
	if rows[1][1] != "true" || rows[1][2] == "" || len(strings.Fields(rows[1][11])) != 3 {
		t.Errorf("row %v", rows[1])
	}
}

func TestCLITable(t *testing.T) {
	url := cliServer(t)
	// Flags after the URL, a /v1 base URL.
	out, _, err := runCLI(t, url+"/v1", "-n", "2", "--max-tokens", "16")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ttft_ms", "median", "p95", "p99", "completed 2", "output_throughput", "max_tokens 16", "definitions: ttftop probe --help"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// The definitions are in --help, not after every run.
	if strings.Contains(out, "Probe definitions") {
		t.Errorf("the table repeats the definitions:\n%s", out)
	}
}

// TestCLIExit: every request failing is an error (non-zero exit); some
// failing is not.
func TestCLIExit(t *testing.T) {
	var n atomic.Int32
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 || strings.Contains(r.URL.RawQuery, "all") {
			http.Error(w, "no", http.StatusBadGateway)
			return
		}
		scripted("text/event-stream", []step{{Data: sseData(chatChunk("a"), chatChunk("b"), finishChunk, "[DONE]")}})(w, r)
	}))
	out, _, err := runCLI(t, srv.URL+"?all=1", "-n", "2", "--jsonl")
	if err == nil || !strings.Contains(err.Error(), "all 2 requests failed") {
		t.Errorf("all failed: err %v", err)
	}
	if !strings.Contains(out, `"error_kind":"http_status"`) {
		t.Errorf("failed requests not reported: %s", out)
	}
	if _, _, err := runCLI(t, srv.URL, "-n", "4"); err != nil {
		t.Errorf("some failed: %v", err)
	}
}

func TestCLIArgs(t *testing.T) {
	url := cliServer(t)
	for _, args := range [][]string{
		{},
		{url, url, "-c", "2"},
		{url, url, "--csv"},
		{url, "--seed", "7"},
		{url, "--json", "--csv"},
		{url, "--api", "nope"},
		{url, "-n", "0"},
		{url, "-c", "100"},
		{url, "--api-key-env", "A", "--api-key-file", "B"},
		{url, "--header", "broken"},
		{url, "--prompt-file", "/nonexistent/prompt"},
	} {
		if _, _, err := runCLI(t, args...); err == nil {
			t.Errorf("args %q accepted", args)
		}
	}
	if stdout, _, err := runCLI(t, "--help"); err != nil || !strings.Contains(stdout, "--api-key-env") {
		t.Errorf("--help: %v %s", err, stdout)
	}
}

// TestCLIModelDiscovery: several models are named and the first is used.
func TestCLIModelDiscovery(t *testing.T) {
	var mu sync.Mutex
	var got []string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"data":[{"id":"base","owned_by":"vllm"},{"id":"lora-a","owned_by":"vllm"}]}`))
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model         string `json:"model"`
			Stream        bool   `json:"stream"`
			StreamOptions struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
			Temperature *float64 `json:"temperature"`
			Seed        *int64   `json:"seed"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || !body.Stream || !body.StreamOptions.IncludeUsage ||
			body.Temperature == nil || *body.Temperature != 0 || body.Seed == nil || *body.Seed != 7 {
			t.Errorf("request body %+v %v", body, err)
		}
		mu.Lock()
		got = append(got, body.Model)
		mu.Unlock()
		scripted("text/event-stream", []step{{Data: sseData(chatChunk("a"), chatChunk("b"), finishChunk, "[DONE]")}})(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, stderr, err := runCLI(t, srv.URL, "-n", "1", "--sample-seed", "7", "--prewarm")
	mu.Lock()
	defer mu.Unlock()
	if err != nil || !strings.Contains(stderr, "found 2 models (base, lora-a); probing base") || !slices.Equal(got, []string{"base"}) {
		t.Errorf("err %v stderr %q models %v", err, stderr, got)
	}
}

func TestCLIInsecureWarns(t *testing.T) {
	_, stderr, _ := runCLI(t, cliServer(t), "-n", "1", "--insecure")
	if !strings.Contains(stderr, "TLS certificate verification is OFF") {
		t.Errorf("no warning: %q", stderr)
	}
}

// TestCLIServerTimings: Ollama's own durations are printed next to ours.
func TestCLIServerTimings(t *testing.T) {
	srv := server(t, scripted("application/x-ndjson", []step{{Data: `{"model":"m","response":"Fl","done":false}` + "\n"},
		{Wait: 5 * time.Millisecond, Data: `{"model":"m","response":"uffy","done":false}` + "\n" +
			`{"model":"m","response":"","done":true,"total_duration":1926263700,"load_duration":1667241100,"prompt_eval_count":30,"prompt_eval_duration":123822500,"eval_count":6,"eval_duration":133173800}` + "\n"}}))
	out, _, err := runCLI(t, srv.URL+"/api/generate", "-n", "1", "--model", "m")
	if err != nil || !strings.Contains(out, "ollama: total 1926.3 ms, load 1667.2 ms, prompt eval 30 tok in 123.8 ms, eval 6 tok in 133.2 ms (45.1 tok/s)") {
		t.Errorf("%v\n%s", err, out)
	}
	out, _, err = runCLI(t, srv.URL+"/api/generate", "-n", "1", "--model", "m", "--jsonl")
	if err != nil || !strings.Contains(out, `"server_timings":{"engine":"ollama","total_ms":1926.2637,"load_ms":1667.2411`) {
		t.Errorf("%v\n%s", err, out)
	}
}

func TestCLIReasoningJSON(t *testing.T) {
	// 100 ms apart: a phase's TPOT (2 gaps over 3 tokens, 66.7 ms) stays
	// clear of a wrong divisor's (50 ms) however late one chunk is read.
	const gap = 100.0
	out, stderr, err := runCLI(t, probetest.ReasoningServerEvery(t, gap*time.Millisecond), "-n", "2", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var doc struct {
		TotalReasoning *int    `json:"total_reasoning_tokens"`
		TotalAnswer    *int    `json:"total_answer_tokens"`
		MedianTTFTms   float64 `json:"median_ttft_ms"`
		MedianTTFAms   float64 `json:"median_ttfa_ms"`
		Requests       []probeRequestJSON
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.TotalReasoning == nil || *doc.TotalReasoning != 8 || *doc.TotalAnswer != 8 {
		t.Errorf("totals reasoning %v answer %v, want 8 and 8", doc.TotalReasoning, doc.TotalAnswer)
	}
	// The answer starts 3 chunks after the first reasoning token.
	if d := doc.MedianTTFAms - doc.MedianTTFTms; d < 3*gap-5 || d > 3*gap+float64(slack/time.Millisecond) {
		t.Errorf("median TTFA − TTFT = %.1f ms, want ≈ %.0f", d, 3*gap)
	}
	r := doc.Requests[0]
	if r.TTFAms == nil || r.ReasoningTokens == nil || *r.ReasoningTokens != 4 || *r.AnswerTokens != 4 ||
		r.PhaseTokensSource != "usage" || r.ReasoningTPOTms == nil || r.AnswerTPOTms == nil || r.FirstToolCallms != nil {
		t.Fatalf("request %+v", r)
	}
	// Each phase: 2 gaps over 3 tokens (4 − 1).
	for name, v := range map[string]float64{"reasoning": *r.ReasoningTPOTms, "answer": *r.AnswerTPOTms} {
		if v < (2*gap-25)/3 || v > (2*gap+float64(slack/time.Millisecond))/3 {
			t.Errorf("%s TPOT %.2f ms, want ≈ %.1f", name, v, 2*gap/3)
		}
	}
}

func TestCLIReasoningTableAndCSV(t *testing.T) {
	url := probetest.ReasoningServer(t)
	out, _, err := runCLI(t, url, "-n", "1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"result  ttfa_ms  tool_ms  reasoning_tok  answer_tok  reasoning_tpot  answer_tpot",
		"reasoning_tokens 4  answer_tokens 4"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "\n  ttfa_ms  ") {
		t.Errorf("no ttfa_ms statistics row:\n%s", out)
	}
	out, _, err = runCLI(t, url, "-n", "1", "--csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %v err %v", rows, err)
	}
	col := func(name string) string { return rows[1][slices.Index(rows[0], name)] }
	if col("reasoning_tokens") != "4" || col("answer_tokens") != "4" || col("phase_tokens_source") != "usage" ||
		col("ttfa_ms") == "" || col("first_tool_call_ms") != "" {
		t.Errorf("csv row %v", rows[1])
	}
	// A plain stream: no phase columns in the table, TTFA = TTFT in CSV.
	out, _, err = runCLI(t, cliServer(t), "-n", "1")
	if err != nil || strings.Contains(out, "result  ttfa_ms") {
		t.Errorf("plain stream shows phase columns (%v):\n%s", err, out)
	}
	out, _, _ = runCLI(t, cliServer(t), "-n", "1", "--csv")
	rows, _ = csv.NewReader(strings.NewReader(out)).ReadAll()
	if col("ttfa_ms") != col("ttft_ms") || col("reasoning_tokens") != "" {
		t.Errorf("plain csv row %v", rows[1])
	}
}

// TestBreakdownVLLMMetrics: with --include-metrics the request asks for
// vLLM's per-request metrics, whose queue, prefill and decode join the
// breakdown. The metrics object is the one of vLLM's documentation
// (docs/features/per_request_metrics.md); no capture of it exists yet.
func TestBreakdownVLLMMetrics(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		scripted("text/event-stream", []step{{Data: sseData(chatChunk("a"), chatChunk("b"), finishChunk,
			`{"object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":42,"completion_tokens":2,"total_tokens":44},"metrics":{"time_to_first_token_ms":85.2,"generation_time_ms":1240.5,"queue_time_ms":12.3,"mean_itl_ms":9.1,"tokens_per_second":103.2}}`,
			"[DONE]")}})(w, r)
	}))
	out, _, err := runCLI(t, srv.URL, "-n", "1", "--jsonl", "--include-metrics")
	if err != nil {
		t.Fatal(err)
	}
	var req probeRequestJSON
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &req); err != nil {
		t.Fatal(err)
	}
	got := partsByName(req.Breakdown)
	for part, want := range map[string]float64{probe.PartQueue: 12.3, probe.PartPrefill: 85.2, probe.PartDecode: 1240.5} {
		if p := got[part]; math.Abs(p.MS-want) > 1e-9 || !strings.HasPrefix(p.Source, "server: vllm metrics.") {
			t.Errorf("%s %+v, want %v ms from vLLM", part, p, want)
		}
	}
	if req.Server == nil || req.Server.Engine != "vllm" || req.Server.ServerDecodeTPS != 103.2 {
		t.Errorf("server timings %+v", req.Server)
	}
	if p := got[probe.PartOutsideTTFT]; math.Abs(p.MS-(*req.TTFTms-12.3-85.2)) > 1e-6 {
		t.Errorf("outside TTFT %+v for TTFT %v", p, *req.TTFTms)
	}
	if _, _, err := runCLI(t, srv.URL, "-n", "1", "--jsonl"); err != nil {
		t.Fatal(err)
	}
	table, _, err := runCLI(t, srv.URL, "-n", "1", "--include-metrics")
	if err != nil || !strings.Contains(table, "queue 12.3 · prefill 85.2 · decode 1240.5 · outside_to_first_token") {
		t.Errorf("table breakdown (%v):\n%s", err, table)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(bodies[0], `"include_metrics":true`) || strings.Contains(bodies[1], "include_metrics") {
		t.Errorf("include_metrics sent %q / %q; want only when asked", bodies[0], bodies[1])
	}
}

// TestCLIGoodput: the first token comes 40 ms after the request; with a
// 10 ms TTFT bound no request is good, with 10 s every one is.
func TestCLIGoodput(t *testing.T) {
	steps := []step{{Wait: 40 * time.Millisecond, Data: sseData(chatChunk("a"))}, {Wait: 5 * time.Millisecond,
		Data: sseData(chatChunk("b"), finishChunk, usageChunk(2), "[DONE]")}}
	url := server(t, scripted("text/event-stream", steps)).URL
	for _, c := range []struct {
		bound string
		share float64
	}{{"10ms", 0}, {"10s", 1}} {
		out, _, err := runCLI(t, url, "-n", "2", "--json", "--slo-ttft", c.bound, "--slo-tpot", "0")
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Goodput *probe.Goodput }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		g := doc.Goodput
		if g == nil || g.Share != c.share || g.Requests != 2 || g.Good != int(2*c.share) || len(g.BoundsMS) != 1 ||
			g.GoodOutputTokens != int(4*c.share) || math.Abs(g.GoodOutputThroughput-float64(g.GoodOutputTokens)/(g.DurationMS/1000)) > 1e-9 {
			t.Errorf("--slo-ttft %s: goodput %+v", c.bound, g)
		}
	}
	out, _, err := runCLI(t, url, "-n", "1")
	if err != nil || !strings.Contains(out, "goodput 100.0% (1 of 1 requests meet TTFT ≤ 5s, TPOT ≤ 50ms)") {
		t.Errorf("default bounds (%v):\n%s", err, out)
	}
	out, _, err = runCLI(t, url, "-n", "1", "--csv", "--slo-ttft", "10ms")
	rows, _ := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 2 || rows[1][slices.Index(rows[0], "good")] != "false" {
		t.Errorf("csv good column (%v): %v", err, rows)
	}
	out, _, err = runCLI(t, url, "-n", "1", "--json", "--slo-ttft", "0", "--slo-tpot", "0")
	if err != nil || strings.Contains(out, `"goodput"`) {
		t.Errorf("goodput without bounds (%v): %s", err, out)
	}
	if _, _, err := runCLI(t, url, "--slo-ttft", "fast"); err == nil {
		t.Error("--slo-ttft fast accepted")
	}
}

// TestProbeSecretNeverPrinted: the probe command, every format, success and
// every failure shape, never prints the API key (sources/probe's
// TestSecretNeverPrinted checks results, options and the runner).
func TestProbeSecretNeverPrinted(t *testing.T) {
	t.Setenv("TT_PROBE_TEST_KEY", probetest.SecretToken)
	base := probetest.EchoServer(t)
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(probetest.SecretToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer

	// The CLI, every format, success and every failure shape.
	for _, q := range []string{"", "?case=401", "?case=event"} {
		for _, format := range []string{"", "--json", "--jsonl", "--csv"} {
			for _, auth := range [][]string{{"--api-key-env", "TT_PROBE_TEST_KEY"}, {"--api-key-file", keyFile}} {
				args := append([]string{base + "/v1" + q, "-n", "2", "--stall-timeout", "5s"}, auth...)
				if format != "" {
					args = append(args, format)
				}
				err := probeCommandLine(context.Background(), args, &out, &out)
				if err != nil {
					fmt.Fprintf(&out, "%v %+v %#v", err, err, err)
				}
				probetest.NoSecret(t, fmt.Sprintf("probe %v", args), &out)
			}
		}
	}
}
