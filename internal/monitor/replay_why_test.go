package monitor

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/record"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// recordFault runs a monitor on a synthetic clock for n seconds, as live
// does, recording it: endpoint "pf" has its prefill grow eightfold from
// second 200 to 260 (a cause that rests on its own baseline, learnt over
// the healthy minutes before), endpoint "kv" its KV cache full with
// requests waiting from 230 to 290. It returns live's diagnosis after
// each evaluation.
func recordFault(t *testing.T, n int) (string, map[int]map[string]diagnosis.Diagnosis, map[int]time.Time) {
	t.Helper()
	now := rt0
	objs := []slo.Objective{{Name: "ttft-p95", Kind: slo.Percentile, Signal: telemetry.TTFT, Percentile: 0.95,
		Threshold: 0.5, Window: 20 * time.Second, For: 5 * time.Second}}
	m := New(Options{Objectives: objs, Now: func() time.Time { return now }})
	path := filepath.Join(t.TempDir(), "fault.jsonl.gz")
	if err := m.AddRecorder(path); err != nil {
		t.Fatal(err)
	}
	live, at := map[int]map[string]diagnosis.Diagnosis{}, map[int]time.Time{}
	for s := range n {
		now = rt0.Add(time.Duration(s) * time.Second)
		obs := func(ep string, sig telemetry.Signal, src string, v float64) {
			m.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: now, Endpoint: ep, Signal: sig,
				Source: src + "://" + ep, Value: v, Interval: time.Second})
		}
		prefill, kv, waiting, ttft := 0.05, 0.4, 0.0, 0.1
		if s >= 200 && s < 260 {
			prefill, ttft = 0.4, 0.46
		}
		obs("pf", telemetry.TTFT, "probe:http", ttft+0.01)
		obs("pf", telemetry.TTFT, "scrape:http", ttft)
		obs("pf", telemetry.PrefillTime, "scrape:http", prefill)
		obs("pf", telemetry.QueueTime, "scrape:http", 0.01)
		if s >= 230 && s < 290 {
			kv, waiting, ttft = 0.97, 6, 0.9
		} else {
			ttft = 0.1
		}
		obs("kv", telemetry.TTFT, "probe:http", ttft)
		obs("kv", telemetry.KVCache, "scrape:http", kv)
		obs("kv", telemetry.Waiting, "scrape:http", waiting)
		now = now.Add(time.Duration(100+(s*7919)%800) * time.Millisecond) // live's ticker drifts
		m.EvaluateNow()
		live[s], at[s] = m.Diagnosis.Latest(), now
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return path, live, at
}

// A recorded fault replays with the cause live named, since when live
// named it (within a step), by a seek and by `--json --at`; before and
// after the fault both name none.
func TestReplayNamesTheRecordedCause(t *testing.T) {
	path, live, at := recordFault(t, 320)
	want := func(s int, ep string) diagnosis.Cause { return live[s][ep].Leading() }
	if want(240, "pf") != diagnosis.Prefill || want(250, "kv") != diagnosis.KVCache || want(150, "pf") != diagnosis.None {
		t.Fatalf("live named pf %s at +240s, kv %s at +250s, pf %s at +150s: the scenario tests nothing",
			want(240, "pf"), want(250, "kv"), want(150, "pf"))
	}
	settings, ok, err := record.ReadSettings(path)
	if err != nil || !ok {
		t.Fatalf("settings: %v %v", ok, err)
	}
	j := RecordedJudging(settings)
	r, err := NewReplay(path, record.Fastest, j)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}()
	for _, s := range []int{240, 150, 250, 300, 215} {
		if err := r.Player().Seek(at[s]); err != nil {
			t.Fatal(err)
		}
		got := r.Latest()
		st, err := ReplayAt(path, at[s], time.Minute, j)
		if err != nil {
			t.Fatal(err)
		}
		for _, ep := range []string{"pf", "kv"} {
			if g, w := got[ep].Leading(), want(s, ep); g != w {
				t.Errorf("+%ds after a seek: %s named %s, live %s", s, ep, g, w)
			}
			if g, w := st.Diagnosis[ep].Leading(), want(s, ep); g != w {
				t.Errorf("+%ds ReplayAt: %s named %s, live %s", s, ep, g, w)
			}
			// Since when: live's evaluation instant, the replay's step
			// (whole seconds of recording time): within one step.
			if w := live[s][ep]; w.Named() && got[ep].Named() {
				if d := got[ep].Causes[0].Since.Sub(w.Causes[0].Since).Abs(); d > time.Second {
					t.Errorf("+%ds: %s named since %s, live since %s", s, ep, got[ep].Causes[0].Since, w.Causes[0].Since)
				}
			}
		}
	}
}
