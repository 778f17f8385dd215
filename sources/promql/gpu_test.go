package promql

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// gpuHook answers the fake API as a store holding vLLM replicas (the
// engine series, fleet) and one DCGM metric (its series, from gpus); the
// DCGM query is kept in *query when query is set.
func gpuHook(metric string, fleet, gpus []fakeSeries, query *string) func(w http.ResponseWriter, r *http.Request, q string) bool {
	return func(w http.ResponseWriter, r *http.Request, q string) bool {
		if strings.Contains(r.URL.Path, "/label/") {
			writeJSON(w, http.StatusOK, map[string]any{"status": "success", "data": []string{"vllm:num_requests_running", metric}})
			return true
		}
		if !strings.HasSuffix(r.URL.Path, "/query") {
			return false
		}
		var ss []fakeSeries
		switch {
		case strings.Contains(q, metric): // first: the GPU queries take timestamps too (gpuOnce)
			if query != nil {
				*query = q
			}
			ss = gpus
		case strings.Contains(q, "DCGM_"): // another GPU metric: none held
		case strings.Contains(q, "timestamp("), strings.Contains(q, "vllm:num_requests_running"):
			ss = fleet
		}
		writeVector(w, time.Now(), ss, nil, nil)
		return true
	}
}

// podReplicas are three llama replicas in pods llama-a, -b and -c.
func podReplicas() []fakeSeries {
	rep := func(pod, ip string) fakeSeries {
		return fakeSeries{labels: map[string]string{"model_name": "llama", "pod": pod, "namespace": "serve",
			"instance": ip + ":8000", "ttftop_engine": "vllm"}, value: 2}
	}
	return []fakeSeries{rep("llama-a", "10.0.0.1"), rep("llama-b", "10.0.0.2"), rep("llama-c", "10.0.0.3")}
}

// podGPU is one dcgm-exporter series of node-1 naming pod as the GPU's
// user (Prometheus renamed the pod labels to exported_*).
func podGPU(pod string, v float64) fakeSeries {
	return fakeSeries{labels: map[string]string{"Hostname": "node-1", "instance": "10.1.0.9:9400", "pod": "dcgm-exporter-x",
		"namespace": "gpu-operator", "exported_pod": pod, "exported_namespace": "serve", "ttftop_engine": "dcgm"}, value: v}
}

// gpuCount is the GPU-count series (ttftop_part="series") of s.
func gpuCount(s fakeSeries, n float64) fakeSeries {
	c := map[string]string{"ttftop_part": "series"}
	for k, v := range s.labels {
		c[k] = v
	}
	return fakeSeries{labels: c, value: n}
}

// Kubernetes: replicas carry pod labels; dcgm-exporter's pod mapping names
// the pod using each GPU (exported_pod when Prometheus renamed it). Each
// replica gets its own pod's GPUs even on a shared node, never the node's
// or the fleet's mean; a replica whose pod has no GPU series gets nothing
// and a warning.
func TestGPUJoinedByPod(t *testing.T) {
	f := newFakeProm(t)
	a, b := podGPU("llama-a", 0.8), podGPU("llama-b", 0.2)
	f.set(func(f *fakeProm) {
		f.hook = gpuHook("DCGM_FI_PROF_DRAM_ACTIVE", podReplicas(), []fakeSeries{a, gpuCount(a, 1), b, gpuCount(b, 3)}, nil)
	})
	s, rec := newTestSource(t, testConfig(f.URL()))
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"llama-a/llama": 0.8, "llama-b/llama": 0.2, "llama": (0.8*1 + 0.2*3) / 4}
	for name, v := range want {
		bw := rec.find(telemetry.KindSample, name, telemetry.GPUMemBW)
		if len(bw) != 1 || !within(bw[0].Value, v, 1e-12) {
			t.Errorf("%s: GPU bandwidth %+v, want %v", name, bw, v)
		}
	}
	if bw := rec.find(telemetry.KindSample, "llama-c/llama", telemetry.GPUMemBW); len(bw) != 0 {
		t.Errorf("llama-c has no GPU series but got %+v", bw)
	}
	st := rec.status(t)
	if !strings.Contains(strings.Join(st.Warnings, "\n"), "no GPU series shares a pod or host with llama-c/llama") {
		t.Errorf("warnings %v: want one naming llama-c", st.Warnings)
	}
}

// GPU power adds up: each replica gets the sum over its own pod's GPUs
// (the query sums per pod), the model row the sum over the distinct GPU
// series its replicas joined, never a mean; a replica whose pod has no GPU
// series gets no power (never 0). Pods on one node do not share GPUs: no
// share is stated.
func TestGPUPowerSummedByPod(t *testing.T) {
	f := newFakeProm(t)
	var powerQuery string
	f.set(func(f *fakeProm) {
		f.hook = gpuHook("DCGM_FI_DEV_POWER_USAGE", podReplicas(), []fakeSeries{podGPU("llama-a", 310), podGPU("llama-b", 3*280)}, &powerQuery)
	})
	s, rec := newTestSource(t, testConfig(f.URL()))
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"rate(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION[", "/ 1000", "unless (rate(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION[", "sum by (Hostname, instance, pod"} {
		if !strings.Contains(powerQuery, want) {
			t.Errorf("power query %q lacks %q", powerQuery, want)
		}
	}
	for name, v := range map[string]float64{"llama-a/llama": 310, "llama-b/llama": 840, "llama": 310 + 840} {
		p := rec.find(telemetry.KindSample, name, telemetry.GPUPower)
		if len(p) != 1 || !within(p[0].Value, v, 1e-12) || p[0].Share != nil {
			t.Errorf("%s: GPU power %+v, want %v W, not shared", name, p, v)
		}
	}
	if p := rec.find(telemetry.KindSample, "llama-c/llama", telemetry.GPUPower); len(p) != 0 {
		t.Errorf("llama-c has no GPU series but got %+v", p)
	}
	if bw := rec.find(telemetry.KindSample, "llama-a/llama", telemetry.GPUMemBW); len(bw) != 0 {
		t.Errorf("power series read as DRAM activity: %+v", bw)
	}
}

// A pod-less replica on a node whose GPUs dcgm-exporter maps to pods takes
// the host's GPUs, shared with the pods' replicas (the host's energy over
// all their tokens); each pod's replica keeps its own pod's figure.
func TestGPUPowerPodsAndPodlessOnOneNode(t *testing.T) {
	f := newFakeProm(t)
	podless := fakeSeries{labels: map[string]string{"model_name": "llama", "instance": "10.1.0.9:8000", "ttftop_engine": "vllm"}, value: 2}
	f.set(func(f *fakeProm) {
		f.hook = gpuHook("DCGM_FI_DEV_POWER_USAGE", append(podReplicas()[:2], podless),
			[]fakeSeries{podGPU("llama-a", 310), podGPU("llama-b", 840)}, nil)
	})
	s, rec := newTestSource(t, testConfig(f.URL()))
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, watts := range map[string]float64{"llama-a/llama": 310, "llama-b/llama": 840} {
		p := lastOf(rec.find(telemetry.KindSample, name, telemetry.GPUPower))
		if len(p) != 1 || p[0].Value != watts || p[0].Share != nil {
			t.Errorf("%s: GPU power %+v, want its pod's %v W, not shared", name, p, watts)
		}
	}
	p := lastOf(rec.find(telemetry.KindSample, "10.1.0.9:8000/llama", telemetry.GPUPower))
	if len(p) != 1 || p[0].Value != 310+840 || p[0].Share == nil || p[0].Share.By != 3 || p[0].Share.Partial {
		t.Errorf("pod-less replica: GPU power %+v, want the host's 1150 W shared by 3", p)
	}
}

// Two models served on one host without pod labels (joined by host) and a
// third model alone on another: both models on 10.0.0.1 get the host's
// whole 900 W, stated as shared by both, never split by a guess; their
// model rows too; the model alone has its host's GPUs to itself.
func TestGPUPowerSharedByHost(t *testing.T) {
	f := newFakeProm(t)
	rep := func(model, ip string) fakeSeries {
		return fakeSeries{labels: map[string]string{"model_name": model, "instance": ip + ":8000", "ttftop_engine": "vllm"}, value: 2}
	}
	host := func(ip string, watts float64) fakeSeries {
		return fakeSeries{labels: map[string]string{"Hostname": "node-" + ip, "instance": ip + ":9400", "ttftop_engine": "dcgm"}, value: watts}
	}
	f.set(func(f *fakeProm) {
		f.hook = gpuHook("DCGM_FI_DEV_POWER_USAGE", []fakeSeries{rep("llama", "10.0.0.1"), rep("qwen", "10.0.0.1"), rep("phi", "10.0.0.2")},
			[]fakeSeries{host("10.0.0.1", 900), host("10.0.0.2", 250)}, nil)
	})
	s, rec := newTestSource(t, testConfig(f.URL()))
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	shared := "10.0.0.1:8000/llama,10.0.0.1:8000/qwen"
	for name, want := range map[string]struct {
		watts  float64
		shared string
	}{"10.0.0.1:8000/llama": {900, shared}, "10.0.0.1:8000/qwen": {900, shared}, "llama": {900, shared}, "qwen": {900, shared},
		"10.0.0.2:8000/phi": {250, ""}, "phi": {250, ""}} {
		p := lastOf(rec.find(telemetry.KindSample, name, telemetry.GPUPower))
		if len(p) != 1 || p[0].Value != want.watts {
			t.Errorf("%s: GPU power %+v, want %v W", name, p, want.watts)
			continue
		}
		sh := p[0].Share
		switch {
		case want.shared == "" && sh != nil:
			t.Errorf("%s: alone on its host but shared %+v", name, sh)
		case want.shared != "" && (sh == nil || sh.Scope != "host" || sh.By != 2 || strings.Join(sh.Endpoints, ",") != want.shared || sh.Partial):
			t.Errorf("%s: share %+v, want host shared by %s", name, sh, want.shared)
		}
	}
}

// With --group-by namespace (QA round 5, finding 3): a replica whose host
// has no GPU series gets none, not another host's GPUs of its namespace;
// the replica on the GPUs' host gets them. Only series that say nothing of
// where they run (aggregated by the grouping labels, on both sides) join
// by equal grouping labels.
func TestGPUGroupByNeverLendsAnotherHostsGPUs(t *testing.T) {
	rep := func(ip string) fakeSeries {
		return fakeSeries{labels: map[string]string{"model_name": "llama", "namespace": "prod", "instance": ip + ":8000", "ttftop_engine": "vllm"}, value: 2}
	}
	gpu := fakeSeries{labels: map[string]string{"Hostname": "node-1", "instance": "10.0.0.1:9400", "namespace": "prod", "ttftop_engine": "dcgm"}, value: 0.65}
	f := newFakeProm(t)
	f.set(func(f *fakeProm) {
		f.hook = gpuHook("DCGM_FI_PROF_DRAM_ACTIVE", []fakeSeries{rep("10.0.0.1"), rep("10.0.0.3")}, []fakeSeries{gpu, gpuCount(gpu, 1)}, nil)
	})
	cfg := testConfig(f.URL())
	cfg.GroupBy = []string{"namespace"}
	s, rec := newTestSource(t, cfg)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	var withGPU, without string
	for _, o := range rec.find(telemetry.KindSample, "", telemetry.GPUMemBW) {
		switch {
		case strings.Contains(o.Endpoint, "10.0.0.1:8000"):
			withGPU = o.Endpoint
			if o.Value != 0.65 {
				t.Errorf("%s: DRAM %v, want its host's 0.65", o.Endpoint, o.Value)
			}
		case strings.Contains(o.Endpoint, "10.0.0.3:8000"):
			without = o.Endpoint
			t.Errorf("%s: DRAM %v from another host's GPUs of its namespace", o.Endpoint, o.Value)
		}
	}
	if withGPU == "" {
		t.Errorf("the replica on the GPUs' host got no DRAM figure")
	}
	warned := false
	for _, w := range rec.status(t).Warnings {
		warned = warned || strings.Contains(w, "no GPU series shares a pod or host with") && strings.Contains(w, "10.0.0.3:8000")
	}
	if !warned || without != "" {
		t.Errorf("want a warning naming the replica without GPU series: %v", rec.status(t).Warnings)
	}
}

// Where neither side carries a host or pod (both aggregated by the
// grouping labels), equal grouping labels join them.
func TestGPUGroupByJoinsSeriesWithoutHosts(t *testing.T) {
	rep := fakeSeries{labels: map[string]string{"model_name": "llama", "namespace": "prod", "ttftop_engine": "vllm"}, value: 2}
	gpu := fakeSeries{labels: map[string]string{"namespace": "prod", "ttftop_engine": "dcgm"}, value: 0.4}
	f := newFakeProm(t)
	f.set(func(f *fakeProm) {
		f.hook = gpuHook("DCGM_FI_PROF_DRAM_ACTIVE", []fakeSeries{rep}, []fakeSeries{gpu, gpuCount(gpu, 2)}, nil)
	})
	cfg := testConfig(f.URL())
	cfg.GroupBy = []string{"namespace"}
	s, rec := newTestSource(t, cfg)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rec.find(telemetry.KindSample, "", telemetry.GPUMemBW)
	if len(got) == 0 || got[0].Value != 0.4 {
		t.Errorf("grouped replica without a host: DRAM %+v, want the group's 0.4; warnings %v", got, rec.status(t).Warnings)
	}
}
