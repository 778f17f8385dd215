package promql

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// Replicas are endpoints of their own under the model's aggregate: the
// aggregate's values are the server's aggregation (its series carry no
// replica labels), a replica's its own. A replica without samples for
// MaxLag (a pod replaced in a rollout) is retired; the aggregate stays.
func TestReplicasUnderAggregateAndRetired(t *testing.T) {
	clk := &fakeClock{t: time.Unix(2_000_000, 0)}
	pf := newPodFleet(t, clk, []string{"llama-a", "llama-b"}, func(q string, live []string) []fakeSeries {
		var ss []fakeSeries
		if strings.Contains(q, "vllm:num_requests_running") {
			for i, p := range live {
				ss = append(ss, podSeries(p, float64(i+1)))
			}
			ss = append(ss, fakeSeries{labels: map[string]string{"model_name": "llama", "ttftop_engine": "vllm"}, value: 3})
		}
		return ss
	})
	f := pf.f
	cfg := testConfig(f.URL())
	cfg.MaxLag = time.Minute
	s, rec := newTestSource(t, cfg)
	s.now = clk.Now
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	infos := map[string]telemetry.Endpoint{}
	for _, o := range rec.find(telemetry.KindEndpoint, "", "") {
		infos[o.Endpoint] = *o.Info
	}
	if a := infos["llama"]; !a.Aggregate || a.Group != "" {
		t.Errorf("aggregate %+v", a)
	}
	for _, p := range []string{"llama-a", "llama-b"} {
		name := p + "/llama"
		if r := infos[name]; r.Group != "llama" || r.Replica != p || r.Labels["instance"] != p+":8000" {
			t.Errorf("replica %s: %+v", name, r)
		}
	}
	if d := rec.status(t).Description; !strings.Contains(d, "2 endpoints (1 model, 2 replicas by pod, instance)") {
		t.Errorf("status %q does not count models and replicas", d)
	}
	for ep, want := range map[string]float64{"llama": 3, "llama-a/llama": 1, "llama-b/llama": 2} {
		if got := rec.find(telemetry.KindSample, ep, telemetry.Running); len(got) != 1 || got[0].Value != want {
			t.Errorf("%s running %+v, want %v", ep, got, want)
		}
	}

	// llama-b is replaced: no samples from it, past MaxLag.
	pf.setLive("llama-a")
	rec.Reset()
	clk.Add(30 * time.Second)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.find(telemetry.KindRetire, "", ""); len(got) != 0 {
		t.Fatalf("retired before MaxLag: %+v", got)
	}
	// Past MaxLag it is GONE, still listed (the fake store has no up
	// series: gone for want of samples), and retired only once gone for
	// the viewed window (none here: MaxLag).
	rec.Reset()
	clk.Add(time.Minute)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.find(telemetry.KindRetire, "", ""); len(got) != 0 {
		t.Fatalf("retired as soon as gone: %+v", got)
	}
	checkGone(t, rec, "llama-b/llama")
	rec.Reset()
	clk.Add(time.Minute + time.Second)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rec.find(telemetry.KindRetire, "", "")
	if len(got) != 1 || got[0].Endpoint != "llama-b/llama" || !strings.Contains(got[0].Err, "replica gone") {
		t.Fatalf("retired %+v, want llama-b/llama", got)
	}
	if nd := rec.find(telemetry.KindNoData, "llama-b/llama", ""); len(nd) != 0 {
		t.Errorf("retired replica still reported: %+v", nd)
	}
	if len(s.state.reg.byName["llama"].members) != 1 {
		t.Errorf("aggregate members %d, want 1", len(s.state.reg.byName["llama"].members))
	}
}

// Engines without a model label (TGI, llama.cpp) are named by Config.Models
// by job, else by the job label; model_from says which.
func TestLabellessModelNames(t *testing.T) {
	f := newFakeProm(t)
	f.set(func(f *fakeProm) {
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			if !strings.HasSuffix(r.URL.Path, "/query") || !strings.Contains(q, "timestamp(") {
				return false
			}
			ts := float64(time.Now().UnixMilli()) / 1000
			tgi := func(job, inst string) fakeSeries {
				return fakeSeries{labels: map[string]string{"job": job, "instance": inst, "ttftop_engine": "tgi"}, value: ts}
			}
			writeVector(w, time.Now(), []fakeSeries{tgi("tgi-prod", "10.0.0.1:80"), tgi("tgi-prod", "10.0.0.2:80"), tgi("tgi-canary", "10.0.0.3:80")}, nil, nil)
			return true
		}
	})
	cfg := testConfig(f.URL())
	cfg.Models = map[string]string{"tgi-prod": "meta-llama/Llama-3.1-70B-Instruct"}
	s, rec := newTestSource(t, cfg)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range rec.find(telemetry.KindEndpoint, "", "") {
		got[o.Endpoint] = o.Info.Model + " (" + o.Info.Labels["model_from"] + ", " + string(o.Info.Engine) + ")"
	}
	for name, want := range map[string]string{
		"meta-llama/Llama-3.1-70B-Instruct":             "meta-llama/Llama-3.1-70B-Instruct (config models, tgi)",
		"10.0.0.1:80/meta-llama/Llama-3.1-70B-Instruct": "meta-llama/Llama-3.1-70B-Instruct (config models, tgi)",
		"10.0.0.2:80/meta-llama/Llama-3.1-70B-Instruct": "meta-llama/Llama-3.1-70B-Instruct (config models, tgi)",
		"tgi-canary":             "tgi-canary (job label, tgi)",
		"10.0.0.3:80/tgi-canary": "tgi-canary (job label, tgi)",
	} {
		if got[name] != want {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	if len(got) != 5 {
		t.Errorf("endpoints %v", got)
	}
}

// A model row's rate is marked young while one of its replicas is (here
// restarted after a stop): the sum over [W] spans that replica's gap.
func TestModelRowYoungWithARestartedReplica(t *testing.T) {
	clk := &fakeClock{t: time.Unix(2_000_000, 0).Add(250 * time.Millisecond)} // Prometheus evaluates at milliseconds (young.go)
	pf := newPodFleet(t, clk, []string{"llama-a", "llama-b"}, func(q string, _ []string) []fakeSeries {
		if !strings.Contains(q, "vllm:generation_tokens_total") {
			return nil
		}
		return []fakeSeries{podSeries("llama-a", 100), podSeries("llama-b", 50),
			{labels: map[string]string{"model_name": "llama", "ttftop_engine": "vllm"}, value: 150}}
	})
	f := pf.f
	s, rec := newTestSource(t, testConfig(f.URL()))
	s.now = clk.Now
	refresh := func(pods ...string) {
		t.Helper()
		pf.setLive(pods...)
		rec.Reset()
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		clk.Add(5 * time.Second)
	}
	refresh("llama-a", "llama-b")
	if agg := rec.find(telemetry.KindSample, "llama", telemetry.OutputTPS); len(agg) != 1 || agg[0].SeriesAge != 0 {
		t.Fatalf("model row before any stop: %+v, want one value, not young", agg)
	}
	refresh("llama-a") // llama-b stopped
	refresh("llama-a", "llama-b")
	agg := rec.find(telemetry.KindSample, "llama", telemetry.OutputTPS)
	if len(agg) != 1 || agg[0].SeriesAge <= 0 || agg[0].SeriesAge >= time.Minute {
		t.Fatalf("model row with a restarted replica: %+v, want it marked young", agg)
	}
}

// podFleet is a fake store of one model's replicas by pod: its freshness
// answer holds the pods currently live (set with setLive), and answer
// gives the rest of a query's series (podSeries makes a replica's).
type podFleet struct {
	f    *fakeProm
	mu   sync.Mutex
	live []string
}

func podSeries(pod string, v float64) fakeSeries {
	return fakeSeries{labels: map[string]string{"model_name": "llama", "pod": pod, "instance": pod + ":8000", "ttftop_engine": "vllm"}, value: v}
}

func newPodFleet(t *testing.T, clk *fakeClock, pods []string, answer func(q string, live []string) []fakeSeries) *podFleet {
	pf := &podFleet{f: newFakeProm(t), live: pods}
	pf.f.set(func(f *fakeProm) {
		f.clock = clk.Now
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			if !strings.HasSuffix(r.URL.Path, "/query") {
				return false
			}
			pf.mu.Lock()
			live := append([]string(nil), pf.live...)
			pf.mu.Unlock()
			now := clk.Now()
			var ss []fakeSeries
			if strings.Contains(q, "timestamp(") {
				for _, p := range live {
					ss = append(ss, podSeries(p, float64(now.Add(-2*time.Second).UnixMilli())/1000))
				}
			} else {
				ss = answer(q, live)
			}
			writeVector(w, now, ss, nil, nil)
			return true
		}
	})
	return pf
}

func (pf *podFleet) setLive(pods ...string) {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	pf.live = pods
}

// A replica retired after MaxLag whose rates still answer (a rate over [W]
// of its older samples) comes back as a new endpoint in the same refresh:
// its retirement is sent before its new announcement, so that the store
// and the SLO engine do not retire the endpoint just announced (and keep
// the retired one's state beside it), and it is a stopped replica: no
// live value.
func TestRetiredReplicaReannouncedAfterItsRetirement(t *testing.T) {
	clk := &fakeClock{t: time.Unix(2_000_000, 0)}
	pf := newPodFleet(t, clk, []string{"llama-a", "llama-b"}, func(q string, live []string) []fakeSeries {
		if !strings.Contains(q, "vllm:generation_tokens_total") {
			return nil
		}
		return []fakeSeries{podSeries("llama-a", 100), podSeries("llama-b", 50)} // llama-b's from older samples
	})
	cfg := testConfig(pf.f.URL())
	cfg.MaxLag = time.Minute
	s, rec := newTestSource(t, cfg)
	s.now = clk.Now
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	pf.setLive("llama-a")
	for range 2 { // gone, then retired a MaxLag later
		clk.Add(2 * time.Minute)
		rec.Reset()
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	const name = "llama-b/llama"
	retiredAt, announcedAt := -1, -1
	for i, o := range rec.All() {
		switch {
		case o.Endpoint != name:
		case o.Kind == telemetry.KindRetire && retiredAt < 0:
			retiredAt = i
		case o.Kind == telemetry.KindEndpoint && announcedAt < 0:
			announcedAt = i
		}
	}
	if retiredAt < 0 || announcedAt < 0 || announcedAt < retiredAt {
		t.Errorf("%s retired at observation %d, announced again at %d: want the retirement first", name, retiredAt, announcedAt)
	}
	if got := rec.find(telemetry.KindSample, name, telemetry.OutputTPS); len(got) != 0 {
		t.Errorf("re-added retired replica's output tok/s %+v: want no live value", got)
	}
}

// checkGone: the refresh said the replica is GONE: its target label
// "gone since …", and no target-up sample (the store says nothing of it).
func checkGone(t *testing.T, rec *recorder, name string) {
	t.Helper()
	var h telemetry.TargetHealth
	var ok bool
	for _, o := range rec.find(telemetry.KindEndpoint, name, "") {
		h, ok = o.Info.Target()
	}
	if !ok || h.State != telemetry.TargetGone || h.Reason == "" {
		t.Errorf("%s: target %+v (labelled %v), want gone with a reason", name, h, ok)
	}
	if got := rec.find(telemetry.KindSample, name, telemetry.TargetUp); len(got) != 0 {
		t.Errorf("%s: target up %+v while gone", name, got)
	}
}
