package probe

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func cliServer(t *testing.T) string {
	steps := []step{{data: sseData(roleChunk)}}
	for i := range 4 {
		steps = append(steps, step{wait: 5 * time.Millisecond, data: sseData(chatChunk("w" + itoa(i)))})
	}
	steps = append(steps, step{data: sseData(finishChunk, usageChunk(4), "[DONE]")})
	return server(t, scripted("text/event-stream", steps)).URL
}

func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := Main(ctx, args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
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
	for _, k := range []string{"completed", "failed", "output_throughput", "duration_s", "total_output_tokens"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("summary lacks %q", k)
		}
	}
	for _, m := range []string{"ttft_ms", "tpot_ms", "itl_ms", "e2el_ms"} {
		for _, s := range []string{"mean_", "median_", "p90_", "p99_"} {
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
	for _, k := range []string{"ttft_ms", "tpot_ms", "itl_ms", "e2el_ms", "output_tokens", "output_tokens_source",
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
	if err != nil || len(rows) != 3 || !slices.Equal(rows[0], csvHeader()) {
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
	for _, want := range []string{"ttft_ms", "median", "p99", "completed 2", "output_throughput", "Probe definitions", "max_tokens 16"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
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
		scripted("text/event-stream", []step{{data: sseData(chatChunk("a"), chatChunk("b"), finishChunk, "[DONE]")}})(w, r)
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
		{url, url},
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
	if _, stderr, err := runCLI(t, "--help"); err == nil || !strings.Contains(stderr, "api-key-env") {
		t.Errorf("--help: %v %s", err, stderr)
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
		scripted("text/event-stream", []step{{data: sseData(chatChunk("a"), chatChunk("b"), finishChunk, "[DONE]")}})(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, stderr, err := runCLI(t, srv.URL, "-n", "1", "--seed", "7", "--prewarm")
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
	srv := server(t, scripted("application/x-ndjson", []step{{data: `{"model":"m","response":"Fl","done":false}` + "\n"},
		{wait: 5 * time.Millisecond, data: `{"model":"m","response":"uffy","done":false}` + "\n" +
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
