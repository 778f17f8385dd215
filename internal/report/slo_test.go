package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tokentop/tokentop/slo"
	"github.com/tokentop/tokentop/telemetry"
)

type fakeAlerts struct{ current, history []slo.Alert }

func (f fakeAlerts) Current() []slo.Alert { return f.current }
func (f fakeAlerts) History() []slo.Alert { return f.history }

func TestDocumentCarriesEveryObjective(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	firing := slo.Alert{Objective: "tpot-p95", Endpoint: "gpu-1/llama", Kind: slo.Percentile, Signal: telemetry.TPOT,
		State: slo.Firing, ActiveAt: now.Add(-90 * time.Second), FiredAt: now.Add(-30 * time.Second), Value: 0.0853,
		Threshold: 0.05, Data: telemetry.Live, Count: 12}
	unmeasured := slo.Alert{Objective: "ttft-p95", Endpoint: "gpu-1/llama", Kind: slo.Percentile, Signal: telemetry.TTFT,
		State: slo.NoDataState, Threshold: 5, Data: telemetry.NoData, UnknownSince: now.Add(-time.Minute)}
	done := slo.Alert{Objective: "tpot-p95", Endpoint: "gpu-2/qwen", Kind: slo.Percentile, Signal: telemetry.TPOT,
		State: slo.Resolved, FiredAt: now.Add(-time.Hour), ResolvedAt: now.Add(-50 * time.Minute), Peak: 0.12, Threshold: 0.05}
	doc := Build(telemetry.Snapshot{At: now, Window: time.Minute}, fakeAlerts{current: []slo.Alert{firing, unmeasured}, history: []slo.Alert{firing, done}})

	var buf bytes.Buffer
	if err := WriteJSON(&buf, doc); err != nil {
		t.Fatal(err)
	}
	var got struct {
		At  time.Time
		SLO struct {
			Objectives []map[string]any
			Alerts     []map[string]any
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	objs := got.SLO.Objectives
	if !got.At.Equal(now) || len(objs) != 2 || len(got.SLO.Alerts) != 2 {
		t.Fatalf("document %s", buf.String())
	}
	if objs[0]["state"] != "firing" || objs[0]["value"] != 0.0853 || objs[0]["threshold"] != 0.05 || objs[0]["data"] != "live" {
		t.Errorf("firing objective %v", objs[0])
	}
	if v, ok := objs[1]["value"]; !ok || v != nil || objs[1]["state"] != "no_data" {
		t.Errorf("unmeasured objective %v: want value null, not 0", objs[1])
	}

	buf.Reset()
	if err := WriteText(&buf, doc); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"tpot-p95   gpu-1/llama  FIRING   85.3ms  50ms       live     1m",
		"ttft-p95   gpu-1/llama  no_data  —       5s         no_data  1m",
		"resolved tpot-p95 on gpu-2/qwen: fired 2026-11-30T11:00:00Z, resolved 2026-11-30T11:10:00Z, peak 120ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if d := Build(telemetry.Snapshot{}, nil); d.SLO != nil {
		t.Errorf("no engine, yet SLO %+v", d.SLO)
	}
}
