package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/ttftop/ttftop/telemetry"
)

// dpServer is the data-parallel server of dpStore.
const dpServer = "10.0.4.1:8000/qwen-32b"

// dpStore scripts what the scrape emits for a vLLM server running one
// model on two data-parallel ranks, rank 1 slow with a deep queue: the
// server's row (histograms summed across its ranks, running and waiting
// summed, KV use its fullest rank's), one row per rank naming it, and a
// one-rank server beside it.
func dpStore() *telemetry.Store {
	sc := script{telemetry.NewStore(telemetry.StoreConfig{})}
	const src = "scrape:http://10.0.4.1:8000/metrics"
	announce := func(e telemetry.Endpoint) {
		e.Engine, e.BaseURL = telemetry.EngineVLLM, "http://"+strings.SplitN(e.Name, "/", 2)[0]
		sc.s.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, Endpoint: e.Name, At: t0, Info: &e})
	}
	type figures struct{ ttft, tpot, running, waiting, kv float64 }
	ranks := []figures{{0.062, 0.014, 11, 0, 0.44}, {0.910, 0.048, 13, 17, 0.97}}
	announce(telemetry.Endpoint{Name: dpServer, Model: "qwen-32b"})
	var names []string
	for r := range ranks {
		rank := itoa(r)
		name := dpServer + " [dp " + rank + "]"
		announce(telemetry.Endpoint{Name: name, Model: "qwen-32b", Group: dpServer, Replica: telemetry.RankReplica(rank),
			Labels: map[string]string{telemetry.LabelRank: rank}})
		names = append(names, name)
	}
	announce(telemetry.Endpoint{Name: "10.0.4.2:8000/llama-8b", Model: "llama-8b"})
	const step = 5 * time.Second
	hist := func(ep string, sig telemetry.Signal, b []telemetry.Bucket, sum float64, at time.Time) {
		sc.s.Observe(telemetry.Observation{Kind: telemetry.KindHistogram, Endpoint: ep, Signal: sig, At: at,
			Source: src, Interval: step, Value: sum, Buckets: b})
	}
	for i, at := 0, t0.Add(step); !at.After(tNow); i, at = i+1, at.Add(step) {
		var total figures
		for r, f := range ranks {
			for _, sig := range []telemetry.Signal{telemetry.TTFT, telemetry.TPOT} {
				v := map[telemetry.Signal]float64{telemetry.TTFT: f.ttft, telemetry.TPOT: f.tpot}[sig]
				b, sum := promWindow(v, 10, i)
				hist(names[r], sig, b, sum, at)
				// The server's histogram is its ranks' summed by bucket.
				other, osum := promWindow(map[telemetry.Signal]float64{telemetry.TTFT: ranks[1-r].ttft, telemetry.TPOT: ranks[1-r].tpot}[sig], 10, i)
				if r == 0 {
					for k := range b {
						b[k].Count += other[k].Count
					}
					hist(dpServer, sig, b, sum+osum, at)
				}
			}
			sc.sample(names[r], telemetry.Running, f.running, at, src, step)
			sc.sample(names[r], telemetry.Waiting, f.waiting, at, src, step)
			sc.sample(names[r], telemetry.KVCache, f.kv, at, src, step)
			total.running, total.waiting, total.kv = total.running+f.running, total.waiting+f.waiting, max(total.kv, f.kv)
		}
		sc.sample(dpServer, telemetry.Running, total.running, at, src, step)
		sc.sample(dpServer, telemetry.Waiting, total.waiting, at, src, step)
		sc.sample(dpServer, telemetry.KVCache, total.kv, at, src, step)
		b, sum := promWindow(0.048, 10, i)
		hist("10.0.4.2:8000/llama-8b", telemetry.TTFT, b, sum, at)
		b, sum = promWindow(0.011, 10, i)
		hist("10.0.4.2:8000/llama-8b", telemetry.TPOT, b, sum, at)
		sc.sample("10.0.4.2:8000/llama-8b", telemetry.Running, 6, at, src, step)
		sc.sample("10.0.4.2:8000/llama-8b", telemetry.Waiting, 0, at, src, step)
		sc.sample("10.0.4.2:8000/llama-8b", telemetry.KVCache, 0.22, at, src, step)
	}
	sc.s.Observe(telemetry.Observation{Kind: telemetry.KindSource, Source: src, At: tNow,
		Status: &telemetry.SourceStatus{Name: "scrape 10.0.4.1:8000", Kind: "scrape", State: telemetry.Live,
			LastOK: tNow, Latency: 4 * time.Millisecond}})
	return sc.s
}

// TestGoldenDPRanks: the server's row says its two ranks and its summed
// figures; x lists the ranks under it, the slow rank's deep queue and
// TTFT on its own row. The header counts the server once.
func TestGoldenDPRanks(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 50}} {
		t.Run(sizeName(sz), func(t *testing.T) {
			tm := startWith(t, dpStore(), nil, testOptions(), sz[0], sz[1])
			waitOut(t, tm, "dp×2")
			send(tm, "x")
			waitOut(t, tm, "dp rank 1")
			final := finishFrame(t, tm)
			words := strings.Join(strings.Fields(final), " ")
			for _, want := range []string{"dp rank 0", "24/17", "13/17", "2 endpoints", "10.0.4.1:8000 · 1 endpoint · vllm"} {
				if !strings.Contains(words, want) {
					t.Errorf("%q not on screen:\n%s", want, final)
				}
			}
			golden.RequireEqual(t, []byte(final))
		})
	}
}
