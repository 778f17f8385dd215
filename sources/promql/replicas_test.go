package promql

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokentop/tokentop/telemetry"
)

// Replicas are endpoints of their own under the model's aggregate: the
// aggregate's values are the server's aggregation (its series carry no
// replica labels), a replica's its own. A replica without samples for
// MaxLag (a pod replaced in a rollout) is retired; the aggregate stays.
func TestReplicasUnderAggregateAndRetired(t *testing.T) {
	clk := &fakeClock{t: time.Unix(2_000_000, 0)}
	var mu sync.Mutex
	pods := []string{"llama-a", "llama-b"}
	f := newFakeProm(t)
	f.set(func(f *fakeProm) {
		f.clock = clk.Now
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			if !strings.HasSuffix(r.URL.Path, "/query") {
				return false
			}
			mu.Lock()
			live := append([]string(nil), pods...)
			mu.Unlock()
			now := clk.Now()
			var ss []fakeSeries
			rep := func(pod string, v float64) fakeSeries {
				return fakeSeries{labels: map[string]string{"model_name": "llama", "pod": pod, "instance": pod + ":8000", "tokentop_engine": "vllm"}, value: v}
			}
			switch {
			case strings.Contains(q, "timestamp("):
				for _, p := range live {
					ss = append(ss, rep(p, float64(now.Add(-2*time.Second).UnixMilli())/1000))
				}
			case strings.Contains(q, "vllm:num_requests_running"):
				for i, p := range live {
					ss = append(ss, rep(p, float64(i+1)))
				}
				ss = append(ss, fakeSeries{labels: map[string]string{"model_name": "llama", "tokentop_engine": "vllm"}, value: 3})
			}
			writeVector(w, now, ss, nil, nil)
			return true
		}
	})
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
	for _, p := range pods {
		name := p + "/llama"
		if r := infos[name]; r.Group != "llama" || r.Replica != p || r.Labels["instance"] != p+":8000" {
			t.Errorf("replica %s: %+v", name, r)
		}
	}
	if d := rec.status(t).Description; !strings.Contains(d, "3 endpoints (1 model, 2 replicas by pod, instance)") {
		t.Errorf("status %q does not count models and replicas", d)
	}
	for ep, want := range map[string]float64{"llama": 3, "llama-a/llama": 1, "llama-b/llama": 2} {
		if got := rec.find(telemetry.KindSample, ep, telemetry.Running); len(got) != 1 || got[0].Value != want {
			t.Errorf("%s running %+v, want %v", ep, got, want)
		}
	}

	// llama-b is replaced: no samples from it, past MaxLag.
	mu.Lock()
	pods = []string{"llama-a"}
	mu.Unlock()
	rec.Reset()
	clk.Add(30 * time.Second)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.find(telemetry.KindRetire, "", ""); len(got) != 0 {
		t.Fatalf("retired before MaxLag: %+v", got)
	}
	rec.Reset()
	clk.Add(time.Minute)
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
				return fakeSeries{labels: map[string]string{"job": job, "instance": inst, "tokentop_engine": "tgi"}, value: ts}
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
	clk := &fakeClock{t: time.Unix(2_000_000, 0)}
	var mu sync.Mutex
	fresh := []string{"llama-a", "llama-b"}
	f := newFakeProm(t)
	f.set(func(f *fakeProm) {
		f.clock = clk.Now
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			if !strings.HasSuffix(r.URL.Path, "/query") {
				return false
			}
			mu.Lock()
			live := append([]string(nil), fresh...)
			mu.Unlock()
			now := clk.Now()
			rep := func(pod string, v float64) fakeSeries {
				return fakeSeries{labels: map[string]string{"model_name": "llama", "pod": pod, "instance": pod + ":8000", "tokentop_engine": "vllm"}, value: v}
			}
			var ss []fakeSeries
			switch {
			case strings.Contains(q, "timestamp("):
				for _, p := range live {
					ss = append(ss, rep(p, float64(now.Add(-2*time.Second).UnixMilli())/1000))
				}
			case strings.Contains(q, "vllm:generation_tokens_total"):
				ss = append(ss, rep("llama-a", 100), rep("llama-b", 50),
					fakeSeries{labels: map[string]string{"model_name": "llama", "tokentop_engine": "vllm"}, value: 150})
			}
			writeVector(w, now, ss, nil, nil)
			return true
		}
	})
	s, rec := newTestSource(t, testConfig(f.URL()))
	s.now = clk.Now
	refresh := func(pods ...string) {
		t.Helper()
		mu.Lock()
		fresh = pods
		mu.Unlock()
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
