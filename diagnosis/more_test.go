package diagnosis

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// Every probe failing is down, with the probes' error; a scrape-only
// endpoint whose figures all fail is down too.
func TestDownNamesTheError(t *testing.T) {
	d, now := warmed(t, endpoint("sick", healthy()))
	es := endpoint("sick", healthy())
	rate := 100.0
	es.Signals[telemetry.ErrorRate] = telemetry.SignalSnapshot{Unit: "%", Source: "probe:x", State: telemetry.Live, Value: &rate, Count: 6, NewestFailed: true}
	es.Signals[telemetry.ProbeSuccess] = telemetry.SignalSnapshot{Source: "probe:x", State: telemetry.Error, Err: "503 Service Unavailable"}
	out := d.Update(telemetry.Snapshot{At: now, Endpoints: []telemetry.EndpointSnapshot{es}}, nil)
	f := find(t, out[0], Down)
	if len(out[0].Causes) != 1 || f.Evidence[0].Value != 100 || !strings.Contains(f.Evidence[0].Note, "6 of 6 probes failed: 503") {
		t.Errorf("down: %+v", out[0].Causes)
	}

	scraped := telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: "s"}, Signals: map[telemetry.Signal]telemetry.SignalSnapshot{
		telemetry.Running: {Source: "scrape:x", State: telemetry.Error, Err: "connection refused"},
		telemetry.TTFT:    {Source: "scrape:x", State: telemetry.Stale},
	}}
	out = New(Config{}).Update(telemetry.Snapshot{At: now, Endpoints: []telemetry.EndpointSnapshot{scraped}}, nil)
	if f := find(t, out[0], Down); f.Evidence[0].Note != "connection refused" {
		t.Errorf("scrape down: %+v", f)
	}
}

// A replica twice as slow as its siblings' median is named, on itself
// and on its group's aggregate row, with the siblings' median as the
// baseline; the siblings name none, a 1.5× one included.
func TestReplicaAgainstSiblings(t *testing.T) {
	agg := endpoint("g", healthy())
	agg.Aggregate = true
	sick := healthy().with(server{telemetry.ITL: 40}, nil)
	snap := telemetry.Snapshot{At: t0, Endpoints: []telemetry.EndpointSnapshot{
		agg, rep("r1", healthy()), rep("r2", sick), rep("r3", healthy().with(server{telemetry.ITL: 12}, nil)),
		rep("r4", healthy().with(server{telemetry.ITL: 18}, nil))}}
	d := New(Config{})
	// Just started: not compared yet (a new replica's first requests are
	// slow, its windows nearly empty).
	if out := d.Update(snap, nil); slices.Contains(causes(out[2]), Replica) {
		t.Errorf("a replica named at its first refresh: %+v", out[2].Causes)
	}
	snap.At = t0.Add(30 * time.Second)
	out := d.Update(snap, nil)
	evidence(t, find(t, out[2], Replica), figStep, 40, ptr(12), "siblings")
	if f := find(t, out[0], Replica); !strings.Contains(f.Summary, "r2") || len(out[0].Causes) != 1 {
		t.Errorf("aggregate: %+v", out[0].Causes)
	}
	for _, i := range []int{1, 3, 4} { // r4 is 1.5× the others' median: not far
		if got := causes(out[i]); !slices.Equal(got, []Cause{None}) {
			t.Errorf("%s: %v", out[i].Endpoint, got)
		}
	}
}

// A breach on a probe-only endpoint cannot be split: unclear, naming
// what is missing.
func TestUnclearSaysWhatIsMissing(t *testing.T) {
	probeOnly := figs{probe: map[telemetry.Signal]float64{telemetry.TTFT: 120, telemetry.TPOT: 11}}
	d, now := warmed(t, endpoint("p", probeOnly))
	slow := figs{probe: map[telemetry.Signal]float64{telemetry.TTFT: 900, telemetry.TPOT: 11}}
	out := d.Update(telemetry.Snapshot{At: now, Endpoints: []telemetry.EndpointSnapshot{endpoint("p", slow)}}, pending("p", telemetry.TTFT))
	f := find(t, out[0], Unclear)
	if !slices.ContainsFunc(f.Missing, func(m string) bool { return strings.Contains(m, "queue time") }) {
		t.Errorf("missing %q does not name the queue time", f.Missing)
	}
	// Before the baselines are warm, the alert is unclear for that reason.
	out = New(Config{}).Update(telemetry.Snapshot{At: now, Endpoints: []telemetry.EndpointSnapshot{endpoint("p", slow)}}, pending("p", telemetry.TTFT))
	f = find(t, out[0], Unclear)
	if !slices.ContainsFunc(f.Missing, func(m string) bool { return strings.HasPrefix(m, "baselines: 0s of the 30s") }) {
		t.Errorf("missing %q does not say the baselines are warming up", f.Missing)
	}
}

// A fault that lasts keeps its name and its start: the baselines do not
// learn it while the endpoint is unwell.
func TestLastingFaultKeepsItsStart(t *testing.T) {
	d, start := warmed(t, endpoint("e", healthy()))
	fault := healthy().with(server{telemetry.Waiting: 6, telemetry.QueueTime: 300, telemetry.TTFT: 400}, nil)
	now := start
	for range 600 {
		out := d.Update(telemetry.Snapshot{At: now, Endpoints: []telemetry.EndpointSnapshot{endpoint("e", fault)}}, nil)
		if f := find(t, out[0], Queueing); !f.Since.Equal(start) {
			t.Fatalf("at %s: since %s, want %s", now.Sub(start), f.Since, start)
		}
		now = now.Add(time.Second)
	}
	// Healed: none, and the next fault starts anew.
	out := d.Update(telemetry.Snapshot{At: now, Endpoints: []telemetry.EndpointSnapshot{endpoint("e", healthy())}}, nil)
	if got := causes(out[0]); !slices.Equal(got, []Cause{None}) {
		t.Fatalf("healed: %v", got)
	}
	now = now.Add(time.Second)
	out = d.Update(telemetry.Snapshot{At: now, Endpoints: []telemetry.EndpointSnapshot{endpoint("e", fault)}}, nil)
	if f := find(t, out[0], Queueing); !f.Since.Equal(now) {
		t.Errorf("second fault since %s, want %s", f.Since, now)
	}
}

// Ten minutes of healthy figures with ±20 % noise on every one name no
// cause after the warm-up.
func TestNoisyHealthyNamesNone(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := New(Config{})
	now := t0
	for i := range 600 {
		f := healthy()
		for k, v := range f.server {
			f.server[k] = v * (0.8 + 0.4*rng.Float64())
		}
		for k, v := range f.probe {
			f.probe[k] = v * (0.8 + 0.4*rng.Float64())
		}
		out := d.Update(telemetry.Snapshot{At: now, Endpoints: []telemetry.EndpointSnapshot{endpoint("e", f)}}, nil)
		if got := causes(out[0]); i > 30 && !slices.Equal(got, []Cause{None}) {
			t.Fatalf("at %ds: %v %+v", i, got, out[0].Causes)
		}
		now = now.Add(time.Second)
	}
}

// An endpoint gone from the snapshot is forgotten: memory stays bounded.
func TestForgetsGoneEndpoints(t *testing.T) {
	d, now := warmed(t, endpoint("a", healthy()), endpoint("b", healthy()))
	d.Update(telemetry.Snapshot{At: now, Endpoints: []telemetry.EndpointSnapshot{endpoint("a", healthy())}}, []slo.Alert{})
	if len(d.eps) != 1 || len(d.Latest()) != 1 {
		t.Errorf("remembers %d endpoints, latest %d; want 1", len(d.eps), len(d.Latest()))
	}
}

// The client − server gap is a difference, often negative (the probes'
// short requests beat the engine's mean request): its rise from −40 to
// −5 ms while the client's TTFT barely moved (60 → 75 ms, under 1.5×) is
// noise, not a network fault (seen in the simulator's healthy soak on a
// loaded machine).
func TestNetworkNeedsTheClientTTFTToGrow(t *testing.T) {
	base := healthy().with(server{telemetry.TTFT: 100}, probe{telemetry.TTFT: 60})
	d, now := warmed(t, endpoint("e", base))
	slower := base.with(server{telemetry.TTFT: 80}, probe{telemetry.TTFT: 75})
	out := d.Update(telemetry.Snapshot{At: now, Endpoints: []telemetry.EndpointSnapshot{endpoint("e", slower)}}, pending("e", telemetry.TTFT))
	if slices.Contains(causes(out[0]), Network) {
		t.Errorf("network named for a client TTFT 1.25× its baseline: %+v", out[0].Causes)
	}
	grown := base.with(server{telemetry.TTFT: 80}, probe{telemetry.TTFT: 120})
	out = d.Update(telemetry.Snapshot{At: now.Add(time.Second), Endpoints: []telemetry.EndpointSnapshot{endpoint("e", grown)}}, pending("e", telemetry.TTFT))
	find(t, out[0], Network)
}

// A longer step whose floor grew with neither the batch nor the KV in use
// is not decode at its roofline: when a slowdown ends, the MBU (read over
// the scrape's rate window) recovers before the step's longer window
// does, and MBU × step reads as a higher floor (seen in the demo as its
// GPU recovered).
func TestBandwidthNeedsMoreBytes(t *testing.T) {
	h := healthy()
	d, now := warmed(t, endpoint("e", h))
	ending := h.with(server{telemetry.ITL: 20, telemetry.MBU: 55}, probe{telemetry.TPOT: 21})
	out := d.Update(telemetry.Snapshot{At: now, Endpoints: []telemetry.EndpointSnapshot{endpoint("e", ending)}}, pending("e", telemetry.TPOT))
	if slices.Contains(causes(out[0]), Bandwidth) {
		t.Errorf("bandwidth named with the batch and KV unchanged: %+v", out[0].Causes)
	}
	longer := h.with(server{telemetry.ITL: 20, telemetry.MBU: 55, telemetry.KVCache: 80}, probe{telemetry.TPOT: 21})
	out = d.Update(telemetry.Snapshot{At: now.Add(time.Second), Endpoints: []telemetry.EndpointSnapshot{endpoint("e", longer)}}, pending("e", telemetry.TPOT))
	find(t, out[0], Bandwidth)
}

// A group's breach that one far replica explains is not its siblings'
// symptom: a sibling whose own figures moved a little (1.6× prefill, on a
// loaded host) names none, while the far one names replica; without a far
// replica the group's breach makes each replica unwell, as before.
func TestGroupBreachExplainedBySickReplica(t *testing.T) {
	agg := endpoint("g", healthy())
	agg.Aggregate = true
	d, now := warmed(t, agg, rep("r1", healthy()), rep("r2", healthy()), rep("r3", healthy()))
	moved := healthy().with(server{telemetry.PrefillTime: 160, telemetry.TTFT: 165}, nil)
	groupAlert := pending("g", telemetry.TTFT)
	out := d.Update(telemetry.Snapshot{At: now, Endpoints: []telemetry.EndpointSnapshot{agg, rep("r1", moved),
		rep("r2", healthy().with(server{telemetry.TTFT: 900, telemetry.PrefillTime: 890}, nil)), rep("r3", healthy())}}, groupAlert)
	find(t, out[2], Replica)
	if got := causes(out[1]); !slices.Equal(got, []Cause{None}) {
		t.Errorf("r1 beside a sick replica names %v", got)
	}
	out = d.Update(telemetry.Snapshot{At: now.Add(time.Second), Endpoints: []telemetry.EndpointSnapshot{agg, rep("r1", moved),
		rep("r2", moved), rep("r3", moved)}}, groupAlert)
	find(t, out[1], Prefill)
}

// rep is replica name of the group "g" with figures f.
func rep(name string, f figs) telemetry.EndpointSnapshot {
	es := endpoint(name, f)
	es.Group, es.Replica = "g", name
	return es
}

// A data-parallel rank twice as slow as the server's other rank is named
// as a rank, on itself and on its server's row; the healthy rank names
// none.
func TestRankAgainstOtherRanks(t *testing.T) {
	rank := func(r string, f figs) telemetry.EndpointSnapshot {
		es := endpoint("s [dp "+r+"]", f)
		es.Group, es.Replica, es.Labels = "s", telemetry.RankReplica(r), map[string]string{telemetry.LabelRank: r}
		return es
	}
	snap := telemetry.Snapshot{At: t0, Endpoints: []telemetry.EndpointSnapshot{
		endpoint("s", healthy()), rank("0", healthy()), rank("1", healthy().with(server{telemetry.ITL: 40}, nil))}}
	d := New(Config{})
	d.Update(snap, nil)
	snap.At = t0.Add(30 * time.Second)
	out := d.Update(snap, nil)
	if f := find(t, out[2], Replica); !strings.HasPrefix(f.Summary, "rank:") {
		t.Errorf("the slow rank: %+v", f)
	}
	if f := find(t, out[0], Replica); f.Summary != "dp rank 1 far slower than the server's other ranks" {
		t.Errorf("the server's row: %+v", out[0].Causes)
	}
	if got := causes(out[1]); !slices.Equal(got, []Cause{None}) {
		t.Errorf("the healthy rank: %v", got)
	}
}
