package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/probetest"
	"github.com/ttftop/ttftop/internal/race"
	"github.com/ttftop/ttftop/internal/schematest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/tui/raceview"
)

// raceAccuracy is how far a race figure may trail the server's own
// instants on a loaded, shared machine (the probe's own error is
// microseconds: bench/probe_accuracy.sh).
const raceAccuracy = 60 * time.Millisecond

func runRaceCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errs bytes.Buffer
	code := run(context.Background(), append([]string{"race"}, args...), &out, &errs)
	return code, out.String(), errs.String()
}

func keysOf(m map[string]any) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

// race --json is one document whose shape scripts rely on: pinned here,
// key for key; its figures are the paced servers' truth, and a failed
// racer has no position and null latencies (never zeros).
func TestRaceJSONShape(t *testing.T) {
	slow := probetest.StartPaced(t, probetest.Pace{TTFT: 120 * time.Millisecond, Gap: 25 * time.Millisecond, Answer: 8})
	fast := probetest.StartPaced(t, probetest.Pace{TTFT: 20 * time.Millisecond, Gap: 5 * time.Millisecond, Answer: 8})
	code, out, errs := runRaceCLI(t, slow.URL, fast.URL, "--json", "--rounds", "2", "--model", "m")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	schematest.Validate(t, "race", []byte(out))
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := strings.Join(keysOf(doc), ","); got != "max_tokens,prompt_chars,racers,rounds,schema,summary" || doc["schema"] != "ttftop/v1" {
		t.Errorf("document keys %s", got)
	}
	racers := doc["racers"].([]any)
	if got := strings.Join(keysOf(racers[0].(map[string]any)), ","); got != "api,label,model,target" || len(racers) != 2 {
		t.Errorf("racer keys %s (%d racers)", got, len(racers))
	}
	rounds := doc["rounds"].([]any)
	if len(rounds) != 2 {
		t.Fatalf("%d rounds", len(rounds))
	}
	slowTruth, fastTruth := slow.Truths(), fast.Truths()
	for k, r := range rounds {
		round := r.(map[string]any)
		if got := strings.Join(keysOf(round), ","); got != "results,round,start_skew_ms" {
			t.Errorf("round keys %s", got)
		}
		results := round["results"].([]any)
		for i, res := range results {
			j := res.(map[string]any)
			if got := strings.Join(keysOf(j), ","); got != "e2e_ms,label,ok,output_tokens,position,target,tokens_source,tpot_ms,ttft_ms" {
				t.Errorf("result keys %s", got)
			}
			truth := slowTruth[k]
			wantPos, wantTarget := 2.0, slow.URL
			if i == 1 {
				truth, wantPos, wantTarget = fastTruth[k], 1, fast.URL
			}
			if j["position"] != wantPos || !strings.HasPrefix(j["target"].(string), wantTarget) || j["output_tokens"] != 8.0 {
				t.Errorf("round %d racer %d: position %v target %v tokens %v", k+1, i, j["position"], j["target"], j["output_tokens"])
			}
			for name, want := range map[string]time.Duration{"ttft_ms": truth.TTFT(), "e2e_ms": truth.E2E()} {
				got := time.Duration(j[name].(float64) * float64(time.Millisecond))
				if got < want-time.Millisecond || got > want+raceAccuracy {
					t.Errorf("round %d racer %d %s %v, server's truth %v", k+1, i, name, got, want)
				}
			}
		}
	}
	summary := doc["summary"].(map[string]any)
	if got := strings.Join(keysOf(summary), ","); got != "ci_level_ratio,ci_method,comparisons,racers,rounds,wins" {
		t.Errorf("summary keys %s", got)
	}
	if w := summary["wins"].([]any); w[0] != 0.0 || w[1] != 2.0 {
		t.Errorf("wins %v, want [0 2]", w)
	}
}

func TestRaceJSONFailedRacer(t *testing.T) {
	ok := probetest.StartPaced(t, probetest.Pace{TTFT: 5 * time.Millisecond, Gap: 5 * time.Millisecond, Answer: 4})
	broken := probetest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	code, out, errs := runRaceCLI(t, ok.URL, broken.URL, "--json")
	if code != 1 || !strings.Contains(errs, "every request failed for B") {
		t.Errorf("exit %d, stderr %q: want 1 and the failed racer named", code, errs)
	}
	var doc struct {
		Rounds []struct {
			Results []map[string]any `json:"results"`
		} `json:"rounds"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	b := doc.Rounds[0].Results[1]
	for _, k := range []string{"position", "ttft_ms", "tpot_ms", "e2e_ms"} {
		if v, present := b[k]; !present || v != nil {
			t.Errorf("failed racer %s = %v (present %v), want null", k, v, present)
		}
	}
	if b["ok"] != false || !strings.Contains(b["error"].(string), "503") {
		t.Errorf("failed racer: %v", b)
	}
	if doc.Rounds[0].Results[0]["position"] != 1.0 {
		t.Errorf("the healthy racer's position %v", doc.Rounds[0].Results[0]["position"])
	}
}

// Without a terminal: each round's result as text, the racers named,
// the start spread said; with rounds, the summary.
func TestRacePlainText(t *testing.T) {
	slow := probetest.StartPaced(t, probetest.Pace{TTFT: 60 * time.Millisecond, Gap: 10 * time.Millisecond, Answer: 6})
	fast := probetest.StartPaced(t, probetest.Pace{TTFT: 10 * time.Millisecond, Gap: 2 * time.Millisecond, Answer: 6})
	code, out, errs := runRaceCLI(t, slow.URL, fast.URL, "--rounds", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	for _, want := range []string{"A  127.0.0.1:", "round 1: requests started", "round 2: requests started",
		"result: 1st B  E2E", "        2nd A  E2E", "2 rounds:", "B  wins 2", "B − A (95% CI"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A lone URL races every model the server lists.
func TestRaceModelsOfOneServer(t *testing.T) {
	s := simtest.Start(t, sim.Config{Listen: "127.0.0.1:0", Seed: 1, Models: sim.DefaultModels()})
	code, out, errs := runRaceCLI(t, s.URL(), "--json", "--max-tokens", "8")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var doc raceJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var models []string
	for _, r := range doc.Racers {
		models = append(models, r.Model)
	}
	var want []string
	for _, m := range sim.DefaultModels() {
		want = append(want, m.Name)
	}
	slices.Sort(models)
	slices.Sort(want)
	if !slices.Equal(models, want) {
		t.Errorf("raced %v, the server serves %v", models, want)
	}
	for _, r := range doc.Rounds[0].Results {
		if !r.OK || r.Position == nil {
			t.Errorf("%s: ok %v position %v", r.Label, r.OK, r.Position)
		}
	}
}

// Models named after a URL race on that server; a model before any URL,
// or a lone racer, is a usage error.
func TestRaceTargets(t *testing.T) {
	ts, err := raceTargets([]string{"http://h:1", "a", "b", "http://g:2"}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []raceTarget{{url: "http://h:1", model: "a"}, {url: "http://h:1", model: "b"}, {url: "http://g:2"}}
	if !slices.Equal(ts, want) {
		t.Errorf("targets %+v, want %+v", ts, want)
	}
	if ts, err := raceTargets([]string{"http://h:1"}, ""); err != nil || !ts[0].everyModel {
		t.Errorf("a lone URL: %+v %v, want every model", ts, err)
	}
	for _, args := range [][]string{{"a", "http://h:1"}, {"http://h:1", "b"}} {
		if _, err := raceTargets(args, ""); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// demo --race races the simulator's four models; without a terminal it
// prints the result.
func TestDemoRace(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 200 tokens from each demo model (about 8 s)")
	}
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"demo", "--race"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d\n%s", code, errs.String())
	}
	for _, want := range []string{"DeepSeek-R1-Distill", "requests started", "result: 1st", "4th"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo --race lacks %q:\n%s", want, out.String())
		}
	}
}

// What the probe says an event carried decides how the view draws it,
// and the text is made safe for the terminal where it enters the view.
func TestChunkOfParts(t *testing.T) {
	cases := []struct {
		parts probe.Part
		want  raceview.Part
	}{
		{probe.PartReasoning, raceview.Reasoning},
		{probe.PartAnswer, raceview.Answer},
		{probe.PartReasoning | probe.PartAnswer, raceview.Answer}, // the chunk where the answer starts
		{probe.PartTool, raceview.Tool},
		{0, raceview.Answer}, // formats that do not separate reasoning
	}
	for _, c := range cases {
		got := chunkOf(race.Chunk{Racer: 1, Progress: probe.Progress{Fragment: "x\x1b[31my\nz", Parts: c.parts, Tokens: 3}})
		if got.Part != c.want || got.Racer != 1 || got.Tokens != 3 {
			t.Errorf("parts %v: %+v, want part %v", c.parts, got, c.want)
		}
		if strings.Contains(got.Text, "\x1b") || !strings.Contains(got.Text, "\n") {
			t.Errorf("text %q: want the escape neutralised and the newline kept", got.Text)
		}
	}
}
