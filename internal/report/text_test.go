package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

func TestTextShowsStatesNotNumbersAsLive(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s := telemetry.NewStore(telemetry.StoreConfig{})
	obs := func(ep string, sig telemetry.Signal, v float64, at time.Time) {
		s.Observe(telemetry.Observation{Kind: telemetry.KindSample, Endpoint: ep, Signal: sig, Value: v, At: at, Source: "probe:u", Interval: time.Second})
	}
	obs("fresh", telemetry.TTFT, 0.2, t0.Add(59*time.Second))
	obs("fresh", telemetry.TPOT, 0.02, t0.Add(59*time.Second))
	obs("old", telemetry.TTFT, 0.2, t0)
	s.Observe(telemetry.Observation{Kind: telemetry.KindNoData, Endpoint: "idle", Signal: telemetry.Running, At: t0.Add(59 * time.Second), Source: "scrape:u", Interval: time.Second})
	var buf bytes.Buffer
	if err := Text(&buf, s.Snapshot(t0.Add(time.Minute), 5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"200/200ms", "20.0/20.0ms", "(STALE 1m)", "no data/—"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := WriteJSON(&buf, Build(s.Snapshot(t0.Add(time.Minute), 5*time.Minute), nil)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Endpoints []map[string]any `json:"endpoints"`
		Sources   []any            `json:"sources"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil || len(doc.Endpoints) != 3 || doc.Sources == nil {
		t.Fatalf("json: %v %s", err, buf.String())
	}
}

// The text report lists each GPU with the figures its source has and the
// endpoints it serves; unknown figures are dashes, never 0.
func TestTextListsGPUs(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	snap := telemetry.Snapshot{At: time.Unix(0, 0).UTC(), GPUs: []telemetry.GPUDevice{
		{Host: "h", Index: "0", Name: "NVIDIA H200", MemUsedBytes: p(64 << 30), MemTotalBytes: p(140 << 30), DRAMActiveRatio: p(0.42),
			UtilRatio: p(1), PowerW: p(512), PowerLimitW: p(700), TemperatureCelsius: p(61), Endpoints: []string{"h:8000/m"}},
		{Host: "h", Index: "1", Name: "NVIDIA L4", MemBusyRatio: p(0.3), State: telemetry.Stale},
	}}
	var b strings.Builder
	if err := Text(&b, snap); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"gpu h/0 NVIDIA H200: mem 64.0GiB/140GiB, DRAM 42.0%, util 100%, power 512W/700W, temp 61.0°C → h:8000/m",
		"gpu h/1 NVIDIA L4: mem —/—, DRAM ~30.0% busy, util —, power —/—, temp — (STALE)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
}

// A PromQL snapshot names its rate window, and marks a young series'
// counter rate "+" (with the words under the table) but never its ratios.
func TestTextNamesRateWindowAndYoungRates(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s := telemetry.NewStore(telemetry.StoreConfig{})
	obs := func(sig telemetry.Signal, v float64) {
		s.Observe(telemetry.Observation{Kind: telemetry.KindSample, Endpoint: "m", Signal: sig, Value: v, At: t0, Source: "promql:u",
			Interval: 5 * time.Second, RateWindow: 5 * time.Minute, SeriesAge: 3 * time.Minute})
	}
	obs(telemetry.OutputTPS, 410)
	obs(telemetry.ErrorRate, 0.02)
	obs(telemetry.RequestRate, 1.41)
	obs(telemetry.PrefixCacheHit, 0.5)
	var buf bytes.Buffer
	if err := Text(&buf, s.Snapshot(t0, time.Minute)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"window 1m; rates and ratios over 5m (PromQL window)",
		"410tok/s+", "2.00%", "requests 1.41req/s+", "prefix hit 50.0%",
		"m + tok/s, requests: rates over a series 3m old, younger than their rate window: they read low",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, ratio := range []string{"2.00%+", "50.0%+", "err+", "prefix hit+"} {
		if strings.Contains(out, ratio) {
			t.Errorf("a ratio marked young (%q):\n%s", ratio, out)
		}
	}
}

// A direct scrape's rates are per scrape interval, its error rate over the
// viewed window: the heading says both.
func TestTextDirectScrapeRateWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s := telemetry.NewStore(telemetry.StoreConfig{})
	const src = "scrape:http://gpu-a:8000/metrics"
	s.Observe(telemetry.Observation{Kind: telemetry.KindSample, Endpoint: "m", Signal: telemetry.OutputTPS, Value: 149, At: t0, Source: src,
		Interval: time.Second, RateWindow: time.Second})
	b, sum := telemetry.ErrorCounts(1, 50)
	s.Observe(telemetry.Observation{Kind: telemetry.KindHistogram, Endpoint: "m", Signal: telemetry.ErrorRate, Buckets: b, Value: sum, At: t0,
		Source: src, Interval: time.Second})
	var buf bytes.Buffer
	if err := Text(&buf, s.Snapshot(t0, 5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"window 5m; rates and ratios over 1s (scrape window), ERR over the window", "149tok/s ", "2.00%"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "+") {
		t.Errorf("a figure marked young without a young series:\n%s", out)
	}
}

// A model on one replica is one row, as on the dashboard; a model on two
// lists the model and both replicas. GPU power and energy per token are
// in the text as in the JSON, with their sharing (QA5 #13).
func TestTextLoneReplicaOnceAndGPUFigures(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	live := func(v float64, unit string) telemetry.SignalSnapshot {
		return telemetry.SignalSnapshot{State: telemetry.Live, Value: p(v), Unit: unit}
	}
	ep := func(name, group string, aggregate bool, sigs map[telemetry.Signal]telemetry.SignalSnapshot) telemetry.EndpointSnapshot {
		return telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: name, Group: group, Aggregate: aggregate}, Signals: sigs}
	}
	power := live(262, "W")
	power.Shared = &telemetry.GPUShare{Scope: "host", By: 2, Endpoints: []string{"a", "b"}}
	snap := telemetry.Snapshot{At: time.Unix(0, 0).UTC(), Endpoints: []telemetry.EndpointSnapshot{
		ep("h1:8000/llama", "llama", false, map[telemetry.Signal]telemetry.SignalSnapshot{telemetry.GPUPower: power, telemetry.EnergyPerToken: live(0.65, "J/tok")}),
		ep("h2:8000/llama", "llama", false, nil),
		ep("h3:8000/qwen", "qwen", false, map[telemetry.Signal]telemetry.SignalSnapshot{telemetry.OutputTPS: live(93, "tok/s")}),
		ep("llama", "", true, nil),
		ep("qwen", "", true, map[telemetry.Signal]telemetry.SignalSnapshot{telemetry.OutputTPS: live(93, "tok/s")}),
	}}
	var b strings.Builder
	if err := Text(&b, snap); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	rows := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]]++
		}
	}
	for name, want := range map[string]int{"h1:8000/llama": 2, "h2:8000/llama": 1, "llama": 1, "qwen": 1, "h3:8000/qwen": 0} {
		if rows[name] != want {
			t.Errorf("%s: %d lines, want %d:\n%s", name, rows[name], want, out)
		}
	}
	if want := "h1:8000/llama gpu: power 262W · energy 0.65J/tok (host's GPUs, shared by 2 endpoints"; !strings.Contains(out, want) {
		t.Errorf("missing %q in\n%s", want, out)
	}
}

// A down replica says so under the table, since when and why, and its
// model row how many of its replicas are down.
func TestTextTargetDown(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	down := telemetry.FormatTarget(telemetry.TargetHealth{State: telemetry.TargetDown, Since: now.Add(-72 * time.Second), Reason: "scrape failed: connection refused"})
	snap := telemetry.Snapshot{At: now, Window: time.Minute, Endpoints: []telemetry.EndpointSnapshot{
		{Endpoint: telemetry.Endpoint{Name: "m", Aggregate: true, Labels: map[string]string{telemetry.LabelReplicasDown: "1 of 2 replicas down"}}},
		{Endpoint: telemetry.Endpoint{Name: "a/m", Group: "m", Replica: "a"}},
		{Endpoint: telemetry.Endpoint{Name: "b/m", Group: "m", Replica: "b", Labels: map[string]string{telemetry.LabelTarget: down}}},
	}}
	var b strings.Builder
	if err := Text(&b, snap); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"b/m DOWN since 11:58:48 (" + Age(72*time.Second) + "): scrape failed: connection refused", "m 1 of 2 replicas down"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("%q not in:\n%s", want, b.String())
		}
	}
}
