package probe

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokentop/tokentop/telemetry"
)

func reasoningChunk(text string) string {
	return `{"object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"reasoning_content":` + quote(text) + `},"finish_reason":null}]}`
}

// reasoningServer streams 3 reasoning chunks then 3 content chunks, 20 ms
// apart, and a usage chunk counting 8 tokens of which 4 reasoning (OpenAI's
// completion_tokens_details).
func reasoningServer(t *testing.T) string {
	steps := []step{{data: sseData(roleChunk)}}
	for i := range 3 {
		steps = append(steps, step{wait: 20 * time.Millisecond, data: sseData(reasoningChunk("r" + itoa(i)))})
	}
	for i := range 3 {
		steps = append(steps, step{wait: 20 * time.Millisecond, data: sseData(chatChunk("a" + itoa(i)))})
	}
	steps = append(steps, step{data: sseData(finishChunk,
		`{"object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":8,"total_tokens":15,"completion_tokens_details":{"reasoning_tokens":4}}}`,
		"[DONE]")})
	return server(t, scripted("text/event-stream", steps)).URL
}

func TestCLIReasoningJSON(t *testing.T) {
	out, stderr, err := runCLI(t, reasoningServer(t), "-n", "2", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var doc struct {
		TotalReasoning *int    `json:"total_reasoning_tokens"`
		TotalAnswer    *int    `json:"total_answer_tokens"`
		MedianTTFTms   float64 `json:"median_ttft_ms"`
		MedianTTFAms   float64 `json:"median_ttfa_ms"`
		Requests       []requestJSON
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.TotalReasoning == nil || *doc.TotalReasoning != 8 || *doc.TotalAnswer != 8 {
		t.Errorf("totals reasoning %v answer %v, want 8 and 8", doc.TotalReasoning, doc.TotalAnswer)
	}
	// The answer starts 3 chunks (60 ms) after the first reasoning token.
	if d := doc.MedianTTFAms - doc.MedianTTFTms; d < 55 || d > 60+float64(slack/time.Millisecond) {
		t.Errorf("median TTFA − TTFT = %.1f ms, want ≈ 60", d)
	}
	r := doc.Requests[0]
	if r.TTFAms == nil || r.ReasoningTokens == nil || *r.ReasoningTokens != 4 || *r.AnswerTokens != 4 ||
		r.PhaseTokensSource != "usage" || r.ReasoningTPOTms == nil || r.AnswerTPOTms == nil || r.FirstToolCallms != nil {
		t.Fatalf("request %+v", r)
	}
	// Each phase: 2 gaps of 20 ms over 3 tokens (4 − 1).
	for name, v := range map[string]float64{"reasoning": *r.ReasoningTPOTms, "answer": *r.AnswerTPOTms} {
		if v < 40.0/3-1 || v > (40+float64(slack/time.Millisecond))/3 {
			t.Errorf("%s TPOT %.2f ms, want ≈ 13.3", name, v)
		}
	}
}

func TestCLIReasoningTableAndCSV(t *testing.T) {
	url := reasoningServer(t)
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

// TestReasoningObservations: a reasoning probe feeds a TTFA sample to the
// store and its record carries the phases; one that only reasoned has no
// TTFA sample.
func TestReasoningObservations(t *testing.T) {
	srv := reasoningServer(t)
	r := probeOnce(t, Options{URL: srv})
	obs := Observations(r, "ep", "probe:x", time.Second, time.Now())
	store := telemetry.NewStore(telemetry.StoreConfig{})
	var rec *telemetry.ProbeRecord
	for _, o := range obs {
		store.Observe(o)
		if o.Kind == telemetry.KindProbe {
			rec = o.Probe
		}
	}
	ph := r.Phases()
	if v, n := store.Quantile("ep", telemetry.TTFA, 0.5, time.Now(), time.Minute); n != 1 || math.Abs(v-ph.TTFA.Seconds()) > 1e-6 {
		t.Errorf("store TTFA %v (%v samples), want %v", v, n, ph.TTFA.Seconds())
	}
	if snap, ok := store.Signal("ep", telemetry.TTFA, time.Now(), time.Minute); !ok || snap.Source != "probe:x" {
		t.Errorf("TTFA snapshot %+v %v", snap, ok)
	}
	if rec == nil || rec.TTFAms != ms(ph.TTFA) || *rec.ReasoningTokens != 4 || *rec.AnswerTokens != 4 ||
		rec.PhaseTokensSource != "usage" || rec.ReasoningTPOTms <= 0 || rec.AnswerTPOTms <= 0 || rec.TTFAms <= rec.TTFTms {
		t.Errorf("record %+v", rec)
	}

	only := server(t, scripted("text/event-stream", []step{{data: sseData(reasoningChunk("a"), reasoningChunk("b"),
		finishChunk, usageChunk(2), "[DONE]")}})).URL
	r = probeOnce(t, Options{URL: only})
	for _, o := range Observations(r, "ep", "probe:x", time.Second, time.Now()) {
		if o.Signal == telemetry.TTFA {
			t.Errorf("TTFA sample %v for a stream without an answer", o.Value)
		}
	}
}
