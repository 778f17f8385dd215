package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ttftop/ttftop/internal/schematest"
)

func runAB(t *testing.T, args ...string) abReportJSON {
	t.Helper()
	out, stderr, err := runCLI(t, append(args, "--json", "--max-rpm", "60000")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	schematest.Validate(t, "ab", []byte(out))
	var rep abReportJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Comparisons) != 1 {
		t.Fatalf("comparisons %+v", rep.Comparisons)
	}
	return rep
}

// Rounds alternate the order: A first in odd rounds, B first in even.
func TestABOrderRotates(t *testing.T) {
	var mu sync.Mutex
	var order []string
	mark := func(name string) string {
		return server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			scripted("text/event-stream", []step{{Data: sseData(chatChunk("a"), chatChunk("b"), finishChunk, "[DONE]")}})(w, r)
		})).URL
	}
	out, _, err := runCLI(t, mark("A"), mark("B"), mark("C"), "-n", "3", "--max-rpm", "60000")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(order, ""); got != "ABCBCACAB" {
		t.Errorf("order %s, want ABC BCA CAB", got)
	}
	for _, want := range []string{"B − A (95% CI", "C − A (95% CI", "ttft_p95_ms", "decode_p50_tokens_per_s", "paired"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// Fewer rounds than an interval needs: the difference, no interval, said.
func TestABTooFewRounds(t *testing.T) {
	url := cliServer(t)
	rep := runAB(t, url, url, "-n", "3")
	d := rep.Comparisons[0].Metrics[0]
	if d.Difference == nil || d.CILow != nil || !strings.Contains(d.Verdict, "too few paired rounds") {
		t.Errorf("%+v", d)
	}
}
