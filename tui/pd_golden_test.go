package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/ttftop/ttftop/telemetry"
)

// pdModel is the disaggregated model of pdFleetStore.
const pdModel = "llama-70b"

// pdFleetStore scripts what the PromQL source emits for a P/D model
// behind the llm-d router (docs/disaggregated.md): the router's row, a
// prefill pool of one replica and a decode pool of two, each pool an
// aggregate labelled with its role; and two LoRA adapters of the model
// probed by name through the router.
func pdFleetStore() *telemetry.Store {
	sc := script{telemetry.NewStore(telemetry.StoreConfig{})}
	announce := func(e telemetry.Endpoint) {
		sc.s.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, Endpoint: e.Name, At: t0, Info: &e})
	}
	type pool struct {
		role     string
		replicas []string
		hists    map[telemetry.Signal]float64 // seconds
		values   map[telemetry.Signal]float64
	}
	pools := []pool{
		{telemetry.RolePrefill, []string{"10.0.2.1:8000"},
			map[telemetry.Signal]float64{telemetry.TTFT: 0.058, telemetry.QueueTime: 0.011},
			map[telemetry.Signal]float64{telemetry.Running: 3, telemetry.Waiting: 1, telemetry.KVCache: 0.31}},
		{telemetry.RoleDecode, []string{"10.0.2.2:8000", "10.0.2.3:8000"},
			map[telemetry.Signal]float64{telemetry.TTFT: 0.074, telemetry.KVTransferTime: 0.061, telemetry.TPOT: 0.021},
			map[telemetry.Signal]float64{telemetry.Running: 24, telemetry.Waiting: 2, telemetry.WaitingDeferred: 2,
				telemetry.KVCache: 0.56, telemetry.OutputTPS: 1100}},
	}
	const step = 15 * time.Second
	feed := func(names []string, hists, values map[telemetry.Signal]float64) {
		for i, at := 0, t0.Add(step); !at.After(tNow); i, at = i+1, at.Add(step) {
			for _, ep := range names {
				for sig, v := range hists {
					b, sum := promWindow(v, 20, i)
					sc.s.Observe(telemetry.Observation{Kind: telemetry.KindHistogram, Endpoint: ep, Signal: sig, At: at,
						Source: promSrc, Interval: step, Value: sum, Buckets: b})
				}
				for sig, v := range values {
					sc.sample(ep, sig, v, at, promSrc, step)
				}
			}
		}
	}
	announce(telemetry.Endpoint{Name: pdModel, Model: pdModel, Engine: telemetry.EngineLLMD})
	feed([]string{pdModel}, map[telemetry.Signal]float64{telemetry.TTFT: 0.142, telemetry.TPOT: 0.022},
		map[telemetry.Signal]float64{telemetry.Running: 27, telemetry.RouterTTFTMisses: 0.2, telemetry.OutputTPS: 1100})
	for _, p := range pools {
		agg := pdModel + " [" + p.role + "]"
		announce(telemetry.Endpoint{Name: agg, Model: pdModel, Engine: telemetry.EngineVLLM, Aggregate: true,
			Labels: map[string]string{telemetry.LabelRole: p.role}})
		names := []string{agg}
		for _, rep := range p.replicas {
			name := rep + "/" + pdModel
			announce(telemetry.Endpoint{Name: name, Model: pdModel, Engine: telemetry.EngineVLLM, Group: agg, Replica: rep,
				Labels: map[string]string{telemetry.LabelRole: p.role}})
			names = append(names, name)
		}
		feed(names, p.hists, p.values)
	}
	for _, a := range []string{"sql-lora", "chat-lora"} {
		name := "gw:80/" + a
		announce(telemetry.Endpoint{Name: name, Model: a, Engine: telemetry.EngineLLMD, BaseURL: "http://gw:80",
			Labels: map[string]string{"adapter_of": pdModel}})
		sc.probes(name, t0, tNow, 0.16, 0.022)
	}
	sc.s.Observe(telemetry.Observation{Kind: telemetry.KindSource, Source: promSrc, At: tNow,
		Status: &telemetry.SourceStatus{Name: "promql", Kind: "promql", URL: "http://prom:9090", State: telemetry.Live,
			LastOK: tNow, Latency: 12 * time.Millisecond}})
	return sc.s
}

// TestGoldenPD: a P/D model's rows (router, pools with their replicas,
// its adapters), then the router row's detail with the disaggregated
// section: P:D ratio, the TTFT parts beside the router's TTFT, each
// pool's load.
func TestGoldenPD(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 50}} {
		t.Run(sizeName(sz), func(t *testing.T) {
			tm := startWith(t, pdFleetStore(), nil, testOptions(), sz[0], sz[1])
			waitOut(t, tm, "prefill]")
			golden.RequireEqual(t, []byte(finishFrame(t, tm)))
		})
	}
}

// TestGoldenPDAdapters: x on the model's row lists its LoRA adapters
// under it, indented, the row saying how many.
func TestGoldenPDAdapters(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 50}} {
		t.Run(sizeName(sz), func(t *testing.T) {
			tm := startWith(t, pdFleetStore(), nil, testOptions(), sz[0], sz[1])
			waitOut(t, tm, "prefill]")
			send(tm, "x")
			waitOut(t, tm, "  sql-lora")
			final := finishFrame(t, tm)
			if words := strings.Join(strings.Fields(final), " "); !strings.Contains(words, "+2 LoRA -") {
				t.Errorf("the base row does not say its two adapters, expanded:\n%s", final)
			}
			golden.RequireEqual(t, []byte(final))
		})
	}
}

func TestGoldenPDDetail(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 50}} {
		t.Run(sizeName(sz), func(t *testing.T) {
			tm := startWith(t, pdFleetStore(), nil, testOptions(), sz[0], sz[1])
			waitOut(t, tm, "prefill]")
			send(tm, "enter") // the router's row, its adapters folded under it
			waitOut(t, tm, "disaggregated")
			final := finishFrame(t, tm)
			words := strings.Join(strings.Fields(final), " ")
			for _, want := range []string{"P:D 1:2", "KV transfer 61.1 ms", "router 142 ms", "LoRA 2 probed: chat-lora, sql-lora"} {
				if !strings.Contains(words, want) {
					t.Errorf("%q not on screen", want)
				}
			}
			golden.RequireEqual(t, []byte(final))
		})
	}
}
