package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

type fakeAlerts struct{ current, history []slo.Alert }

func (f fakeAlerts) Current() []slo.Alert { return f.current }
func (f fakeAlerts) History() []slo.Alert { return f.history }

func TestDocumentCarriesEveryObjective(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	firing := slo.Alert{Objective: "tpot-p95", Endpoint: "gpu-1/llama", Kind: slo.Percentile, Signal: telemetry.TPOT,
		State: slo.Firing, ActiveAt: now.Add(-90 * time.Second), FiredAt: now.Add(-30 * time.Second), Value: 0.085312,
		Threshold: 0.05, Data: telemetry.Live, Count: 12}
	unmeasured := slo.Alert{Objective: "ttft-p95", Endpoint: "gpu-1/llama", Kind: slo.Percentile, Signal: telemetry.TTFT,
		State: slo.NoDataState, Threshold: 5, Data: telemetry.NoData, UnknownSince: now.Add(-time.Minute)}
	done := slo.Alert{Objective: "tpot-p95", Endpoint: "gpu-2/qwen", Kind: slo.Percentile, Signal: telemetry.TPOT,
		State: slo.Resolved, FiredAt: now.Add(-time.Hour), ResolvedAt: now.Add(-50 * time.Minute), Peak: 0.0110654, Threshold: 0.05}
	doc := Build(telemetry.Snapshot{At: now, Window: time.Minute}, fakeAlerts{current: []slo.Alert{firing, unmeasured}, history: []slo.Alert{firing, done}})

	var buf bytes.Buffer
	if err := WriteJSON(&buf, doc); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Schema   string
		At       time.Time
		WindowMS float64 `json:"window_ms"`
		SLO      struct {
			Objectives []map[string]any
			Alerts     []map[string]any
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	objs := got.SLO.Objectives
	if got.Schema != telemetry.JSONSchema || !got.At.Equal(now) || got.WindowMS != 60000 || len(objs) != 2 || len(got.SLO.Alerts) != 2 {
		t.Fatalf("document %s", buf.String())
	}
	// A latency objective's figures in ms, named so, and no seconds beside.
	_, seconds := objs[0]["value"]
	if objs[0]["state"] != "firing" || math.Abs(objs[0]["value_ms"].(float64)-85.312) > 1e-9 || objs[0]["threshold_ms"] != 50.0 ||
		seconds || objs[0]["data"] != "live" || objs[0]["observations"] != 12.0 {
		t.Errorf("firing objective %v", objs[0])
	}
	if v, ok := objs[1]["value_ms"]; !ok || v != nil || objs[1]["state"] != "no_data" {
		t.Errorf("unmeasured objective %v: want value null, not 0", objs[1])
	}

	buf.Reset()
	if err := WriteText(&buf, doc); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	// Measured figures with 3 significant digits, as everywhere (QA saw
	// 11.065ms beside 7.41ms); thresholds exact, as written.
	for _, want := range []string{"tpot-p95   gpu-1/llama  FIRING   85.3ms  50ms       live     1m",
		"ttft-p95   gpu-1/llama  no_data  —       5s         no_data  1m",
		"resolved tpot-p95 on gpu-2/qwen: fired 2026-11-30T11:00:00Z, resolved 2026-11-30T11:10:00Z, peak 11.1ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if d := Build(telemetry.Snapshot{}, nil); d.SLO != nil {
		t.Errorf("no engine, yet SLO %+v", d.SLO)
	}
}

// Burn windows and the budget span are nanoseconds in slo.Alert: in the
// JSON they are ms; a ratio objective's value and threshold are burn
// rates and say so, its budget a ratio.
func TestSLOJSONDurationsInMS(t *testing.T) {
	remaining := 0.5
	a := slo.Alert{Objective: "ttft-99pct", Kind: slo.Ratio, Signal: telemetry.TTFT, Value: 14.4, Threshold: 1,
		BurnRates: []slo.BurnRate{{Window: 5 * time.Minute, Rate: 20, Factor: 14.4}}, BudgetRemaining: &remaining,
		BudgetSpan: 90 * time.Second}
	b, err := json.Marshal(SLO{Objectives: []ObjectiveState{{Alert: a, Value: &a.Value}}, Alerts: []slo.Alert{a}})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Objectives, Alerts []map[string]any }
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, m := range append(got.Objectives, got.Alerts...) {
		rate := m["burn_rates"].([]any)[0].(map[string]any)
		_, ns := m["budget_span"]
		_, bare := m["value"]
		if m["value_burn_rate"] != 14.4 || m["threshold_burn_rate"] != 1.0 || bare || m["budget_remaining_ratio"] != 0.5 ||
			m["budget_span_ms"] != 90000.0 || ns || rate["window_ms"] != 300000.0 || rate["window"] != nil ||
			rate["value_burn_rate"] != 20.0 || rate["threshold_burn_rate"] != 14.4 {
			t.Errorf("%s", b)
		}
	}
}
