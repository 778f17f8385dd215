package telemetry

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func f64(v float64) *float64 { return &v }

func TestGPUDevicesInSnapshot(t *testing.T) {
	s := NewStore(StoreConfig{})
	t0 := time.Unix(10_000, 0)
	for _, idx := range []string{"10", "2", "0"} {
		s.Observe(Observation{Kind: KindGPU, At: t0, Source: "dcgm:http://h:9400/metrics", Interval: time.Second,
			GPU: &GPUDevice{Key: "h/" + idx, Host: "h", Index: idx, Name: "NVIDIA H200", Endpoints: []string{"m"},
				MemUsedBytes: f64(1 << 30), PowerW: f64(300), TemperatureCelsius: f64(60)}})
	}
	snap := s.Snapshot(t0.Add(time.Second), time.Minute)
	var order []string
	for _, d := range snap.GPUs {
		order = append(order, d.Index)
		if d.State != Live || d.Source != "dcgm:http://h:9400/metrics" || d.Endpoints[0] != "m" {
			t.Fatalf("device %+v", d)
		}
	}
	if strings.Join(order, ",") != "0,2,10" {
		t.Fatalf("natural order: %v", order)
	}
	b, err := json.Marshal(snap.GPUs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"mem_used_bytes":1073741824`, `"power_w":300`, `"temperature_celsius":60`} {
		if !strings.Contains(string(b), k) {
			t.Fatalf("%s lacks %s", b, k)
		}
	}
	if strings.Contains(string(b), "mem_total_bytes") {
		t.Fatalf("unknown total must be absent, not zero: %s", b)
	}
	if d := s.Snapshot(t0.Add(10*time.Second), time.Minute).GPUs[0]; d.State != Stale {
		t.Fatalf("10 s old at 1 s interval: %s", d.State)
	}
	if n := len(s.Snapshot(t0.Add(2*time.Hour), time.Minute).GPUs); n != 0 {
		t.Fatalf("devices older than MaxWindow are dropped, got %d", n)
	}
}

// Energy per token is mean power ÷ mean output tok/s over the window:
// 300 W then 500 W (mean 400 W) against 100 then 300 tok/s (mean 200) is
// 2 J/token; where only probes give tokens it is their tokens over the
// covered time, marked approx.
func TestEnergyPerToken(t *testing.T) {
	s := NewStore(StoreConfig{})
	t0 := time.Unix(20_000, 0)
	for i, p := range []float64{300, 500} {
		at := t0.Add(time.Duration(i) * time.Second)
		s.Observe(Observation{Kind: KindSample, At: at, Endpoint: "m", Signal: GPUPower, Source: "dcgm:x", Value: p, Interval: time.Second})
		s.Observe(Observation{Kind: KindSample, At: at, Endpoint: "m", Signal: OutputTPS, Source: "scrape:y", Value: []float64{100, 300}[i], Interval: time.Second})
	}
	now := t0.Add(1500 * time.Millisecond)
	e := s.Snapshot(now, time.Minute).Endpoints[0].Signals[EnergyPerToken]
	if e.Value == nil || math.Abs(*e.Value-2) > 1e-9 || e.Approx || e.Unit != "J/tok" || !strings.Contains(e.Source, "scrape:y") {
		t.Fatalf("energy per token %+v", e)
	}

	// Probes only: 2 probes of 50 tokens in the 10 s since the endpoint
	// appeared = 10 tok/s; 400 W / 10 = 40 J/token.
	p := NewStore(StoreConfig{})
	p.Observe(Observation{Kind: KindSample, At: t0, Endpoint: "m", Signal: ProbeSuccess, Source: "probe:z", Value: 1})
	for i := range 2 {
		at := t0.Add(time.Duration(i+1) * 4 * time.Second)
		p.Observe(Observation{Kind: KindProbe, At: at, Endpoint: "m", Source: "probe:z", Probe: &ProbeRecord{OK: true, OutputTokens: 50}})
		p.Observe(Observation{Kind: KindSample, At: at, Endpoint: "m", Signal: GPUPower, Source: "dcgm:x", Value: 400, Interval: time.Second})
	}
	e = p.Snapshot(t0.Add(10*time.Second), time.Minute).Endpoints[0].Signals[EnergyPerToken]
	if e.Value == nil || math.Abs(*e.Value-40) > 1e-9 || !e.Approx || !strings.Contains(e.Source, "probe tokens") {
		t.Fatalf("probe-only energy per token %+v", e)
	}

	// More probes than the store keeps (50): the rate is over the span the
	// kept ones cover. One probe of 10 tokens a second for 200 s is
	// 10 tok/s, so 400 W is 40 J/token, not 4× that.
	h := NewStore(StoreConfig{})
	h.Observe(Observation{Kind: KindSample, At: t0, Endpoint: "m", Signal: ProbeSuccess, Source: "probe:z", Value: 1})
	for i := 1; i <= 200; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		h.Observe(Observation{Kind: KindProbe, At: at, Endpoint: "m", Source: "probe:z", Probe: &ProbeRecord{OK: true, OutputTokens: 10}})
		h.Observe(Observation{Kind: KindSample, At: at, Endpoint: "m", Signal: GPUPower, Source: "dcgm:x", Value: 400, Interval: time.Second})
	}
	e = h.Snapshot(t0.Add(200*time.Second), 5*time.Minute).Endpoints[0].Signals[EnergyPerToken]
	if e.Value == nil || math.Abs(*e.Value-40) > 1e-9 {
		t.Fatalf("energy per token over a long window of probes %+v", e)
	}

	// No tokens in the window: no data, never zero or infinite.
	z := NewStore(StoreConfig{})
	z.Observe(Observation{Kind: KindSample, At: t0, Endpoint: "m", Signal: GPUPower, Source: "dcgm:x", Value: 80, Interval: time.Second})
	z.Observe(Observation{Kind: KindSample, At: t0, Endpoint: "m", Signal: OutputTPS, Source: "scrape:y", Value: 0, Interval: time.Second})
	if e := z.Snapshot(t0, time.Minute).Endpoints[0].Signals[EnergyPerToken]; e.Value != nil || e.State != NoData {
		t.Fatalf("idle %+v", e)
	}
}

// Two models on one host's GPUs (quick mode): each carries the GPUs' 600
// W; their J/token is 600 W over both models' 100 + 200 tok/s = 2 J/token,
// the same for each, not 6 and 3. A GPU serving only one of them makes
// that one's figure an estimate.
func TestEnergyPerTokenSharedGPUs(t *testing.T) {
	s := NewStore(StoreConfig{})
	t0 := time.Unix(30_000, 0)
	for _, ep := range []struct {
		name string
		tps  float64
	}{{"a", 100}, {"b", 200}} {
		s.Observe(Observation{Kind: KindSample, At: t0, Endpoint: ep.name, Signal: GPUPower, Source: "dcgm:x", Value: 600, Interval: time.Second})
		s.Observe(Observation{Kind: KindSample, At: t0, Endpoint: ep.name, Signal: OutputTPS, Source: "scrape:y", Value: ep.tps, Interval: time.Second})
	}
	for _, k := range []string{"h/0", "h/1"} {
		s.Observe(Observation{Kind: KindGPU, At: t0, Source: "dcgm:x", Interval: time.Second, GPU: &GPUDevice{Key: k, Endpoints: []string{"a", "b"}}})
	}
	for _, ep := range s.Snapshot(t0, time.Minute).Endpoints {
		e := ep.Signals[EnergyPerToken]
		if e.Value == nil || math.Abs(*e.Value-2) > 1e-9 || e.Approx || !strings.Contains(e.Source, "2 endpoints sharing") {
			t.Fatalf("%s: %+v", ep.Name, e)
		}
		if sh := ep.Signals[GPUPower].Shared; sh == nil || sh.By != 2 || sh.Scope != "gpus" {
			t.Fatalf("%s: power share %+v (devices without a host: a set of GPUs)", ep.Name, sh)
		}
	}
	s.Observe(Observation{Kind: KindGPU, At: t0, Source: "dcgm:x", Interval: time.Second, GPU: &GPUDevice{Key: "h/2", Endpoints: []string{"a"}}})
	for _, ep := range s.Snapshot(t0, time.Minute).Endpoints {
		if e := ep.Signals[EnergyPerToken]; e.Approx != (ep.Name == "a") {
			t.Fatalf("%s: approx %v with a GPU of its own beside the shared ones", ep.Name, e.Approx)
		}
	}
}

// A source that joins by host (PromQL) states the share on its power
// samples: each endpoint's power is the host's, marked shared by 2, and
// J/token the host's 600 W over both endpoints' 300 tok/s; once a sample
// comes without a share, the endpoint's GPUs are its own again.
func TestEnergyPerTokenStatedShare(t *testing.T) {
	s := NewStore(StoreConfig{})
	t0 := time.Unix(30_000, 0)
	share := &GPUShare{Scope: "host", Endpoints: []string{"b", "a"}}
	for _, ep := range []struct {
		name string
		tps  float64
	}{{"a", 100}, {"b", 200}} {
		s.Observe(Observation{Kind: KindSample, At: t0, Endpoint: ep.name, Signal: GPUPower, Source: "promql:x", Value: 600, Interval: time.Second, Share: share})
		s.Observe(Observation{Kind: KindSample, At: t0, Endpoint: ep.name, Signal: OutputTPS, Source: "promql:x", Value: ep.tps, Interval: time.Second})
	}
	share.Endpoints[0] = "mutated" // the store keeps its own copy
	for _, ep := range s.Snapshot(t0, time.Minute).Endpoints {
		e, p := ep.Signals[EnergyPerToken], ep.Signals[GPUPower]
		if e.Value == nil || math.Abs(*e.Value-2) > 1e-9 || e.Approx || !strings.Contains(e.Source, "2 endpoints sharing") {
			t.Fatalf("%s: energy per token %+v", ep.Name, e)
		}
		for _, sh := range []*GPUShare{e.Shared, p.Shared} {
			if sh == nil || sh.Scope != "host" || sh.By != 2 || strings.Join(sh.Endpoints, ",") != "a,b" || sh.Partial {
				t.Fatalf("%s: share %+v", ep.Name, sh)
			}
		}
	}
	e, ok := s.Signal("a", EnergyPerToken, t0, time.Minute)
	if !ok || e.Value == nil || math.Abs(*e.Value-2) > 1e-9 {
		t.Fatalf("Signal: %+v", e)
	}
	if b, err := json.Marshal(e); err != nil || !strings.Contains(string(b), `"shared":{"scope":"host","by":2,"endpoints":["a","b"]}`) {
		t.Fatalf("JSON %s %v: want the share", b, err)
	}
	if p, ok := s.Signal("b", GPUPower, t0, time.Minute); !ok || p.Shared == nil || p.Shared.By != 2 {
		t.Fatalf("Signal power: %+v", p)
	}
	t1 := t0.Add(time.Second)
	s.Observe(Observation{Kind: KindSample, At: t1, Endpoint: "a", Signal: GPUPower, Source: "promql:x", Value: 600, Interval: time.Second})
	s.Observe(Observation{Kind: KindSample, At: t1, Endpoint: "a", Signal: OutputTPS, Source: "promql:x", Value: 100, Interval: time.Second})
	if e, _ := s.Signal("a", EnergyPerToken, t1, time.Second); e.Value == nil || math.Abs(*e.Value-6) > 1e-9 || e.Shared != nil {
		t.Fatalf("own GPUs again: %+v", e)
	}
}

// BenchmarkSnapshotGPUs: a snapshot of 1,000 endpoints on 125 hosts of 8
// GPUs, every model of a host sharing its GPUs (quick mode's join), with
// power and output rate on each: the per-GPU list and the shared J/token.
func BenchmarkSnapshotGPUs(b *testing.B) { benchSnapshot(b, 8) }

// BenchmarkSnapshotNoGPUs is the same store without device records: the
// difference is what the GPU list and the shared J/token cost.
func BenchmarkSnapshotNoGPUs(b *testing.B) { benchSnapshot(b, 0) }

func benchSnapshot(b *testing.B, gpusPerHost int) {
	s := NewStore(StoreConfig{})
	t0 := time.Unix(40_000, 0)
	for h := range 125 {
		host := "node-" + strconv.Itoa(h)
		var eps []string
		for m := range 8 {
			ep := host + ":8000/model-" + strconv.Itoa(m)
			eps = append(eps, ep)
			for i := range 60 {
				at := t0.Add(time.Duration(i) * time.Second)
				s.Observe(Observation{Kind: KindSample, At: at, Endpoint: ep, Signal: GPUPower, Source: "dcgm:x", Value: 4000, Interval: time.Second})
				s.Observe(Observation{Kind: KindSample, At: at, Endpoint: ep, Signal: OutputTPS, Source: "scrape:y", Value: 500, Interval: time.Second})
			}
		}
		for g := range gpusPerHost {
			s.Observe(Observation{Kind: KindGPU, At: t0.Add(59 * time.Second), Source: "dcgm:http://" + host + ":9400/metrics", Interval: time.Second,
				GPU: &GPUDevice{Key: host + "/" + strconv.Itoa(g), Host: host, Index: strconv.Itoa(g), Endpoints: eps, PowerW: f64(500)}})
		}
	}
	now := t0.Add(60 * time.Second)
	b.ReportAllocs()
	for b.Loop() {
		snap := s.Snapshot(now, time.Minute)
		if len(snap.GPUs) != 125*gpusPerHost {
			b.Fatal(len(snap.GPUs))
		}
	}
}

// A server tok/s track that has only had an error (no value, so no chart
// yet) is no output token count for energy per token: the snapshot, which
// every view reads, must not fail on it (a dashboard crashed so, reading
// a newly joined host's endpoint).
func TestEnergyPerTokenWithoutTokenValues(t *testing.T) {
	t0 := time.Unix(30_000, 0)
	for _, o := range []Observation{
		{Kind: KindFailure, At: t0, Endpoint: "m", Signal: OutputTPS, Source: "promql:y", Err: "query timed out", Interval: time.Second},
		{Kind: KindNoData, At: t0, Endpoint: "m", Signal: OutputTPS, Source: "promql:y", Interval: time.Second},
	} {
		s := NewStore(StoreConfig{})
		s.Observe(Observation{Kind: KindSample, At: t0, Endpoint: "m", Signal: GPUPower, Source: "dcgm:x", Value: 300, Interval: time.Second})
		s.Observe(o)
		e := s.Snapshot(t0.Add(500*time.Millisecond), time.Minute).Endpoints[0].Signals[EnergyPerToken]
		if e.Value != nil || e.State != NoData {
			t.Errorf("after %+v: energy per token %+v, want no data", o, e)
		}
	}
}

// Energy per token from GPU power over a young energy series (PromQL:
// rate over [W] reads low) is young when its power is younger than its
// tokens, and so is the power itself; equally young, both read low alike
// and the ratio is not marked.
func TestEnergyPerTokenYoungWithItsPower(t *testing.T) {
	t0 := time.Unix(30_000, 0)
	energy := func(powerAge, tokensAge time.Duration) (SignalSnapshot, SignalSnapshot) {
		s := NewStore(StoreConfig{})
		s.Observe(Observation{Kind: KindSample, At: t0, Endpoint: "m", Signal: GPUPower, Source: "promql:x", Value: 100, Interval: time.Second,
			RateWindow: time.Minute, SeriesAge: powerAge})
		s.Observe(Observation{Kind: KindSample, At: t0, Endpoint: "m", Signal: OutputTPS, Source: "promql:x", Value: 50, Interval: time.Second,
			RateWindow: time.Minute, SeriesAge: tokensAge})
		sig := s.Snapshot(t0, time.Minute).Endpoints[0].Signals
		return sig[EnergyPerToken], sig[GPUPower]
	}
	e, p := energy(20*time.Second, 0)
	if !e.Young || e.SeriesAgeS != 20 || !p.Young || p.SeriesAgeS != 20 {
		t.Errorf("power over a 20s-old series, tokens old: J/token %+v, power %+v; want both young, 20s", e, p)
	}
	if e, _ := energy(20*time.Second, 20*time.Second); e.Young {
		t.Errorf("power and tokens equally young: J/token %+v, want it unmarked", e)
	}
	if e, _ := energy(0, 0); e.Young {
		t.Errorf("old series: J/token %+v, want it unmarked", e)
	}
}
