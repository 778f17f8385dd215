package promql

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tokentop/tokentop/telemetry"
)

// Kubernetes: replicas carry pod labels; dcgm-exporter's pod mapping names
// the pod using each GPU (exported_pod when Prometheus renamed it). Each
// replica gets its own pod's GPUs even on a shared node, never the node's
// or the fleet's mean; a replica whose pod has no GPU series gets nothing
// and a warning.
func TestGPUJoinedByPod(t *testing.T) {
	f := newFakeProm(t)
	f.set(func(f *fakeProm) {
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			if strings.Contains(r.URL.Path, "/label/") {
				writeJSON(w, http.StatusOK, map[string]any{"status": "success", "data": []string{"vllm:num_requests_running", "DCGM_FI_PROF_DRAM_ACTIVE"}})
				return true
			}
			if !strings.HasSuffix(r.URL.Path, "/query") {
				return false
			}
			var ss []fakeSeries
			rep := func(pod, ip string, v float64) fakeSeries {
				return fakeSeries{labels: map[string]string{"model_name": "llama", "pod": pod, "namespace": "serve",
					"instance": ip + ":8000", "tokentop_engine": "vllm"}, value: v}
			}
			switch {
			case strings.Contains(q, "timestamp("), strings.Contains(q, "vllm:num_requests_running"):
				ss = []fakeSeries{rep("llama-a", "10.0.0.1", 2), rep("llama-b", "10.0.0.2", 2), rep("llama-c", "10.0.0.3", 2)}
			case strings.Contains(q, "DCGM_FI_PROF_DRAM_ACTIVE"):
				gpu := func(pod string, v, n float64) []fakeSeries {
					l := map[string]string{"Hostname": "node-1", "instance": "10.1.0.9:9400", "pod": "dcgm-exporter-x",
						"namespace": "gpu-operator", "exported_pod": pod, "exported_namespace": "serve", "tokentop_engine": "dcgm"}
					c := map[string]string{"tokentop_part": "series"}
					for k, v := range l {
						c[k] = v
					}
					return []fakeSeries{{labels: l, value: v}, {labels: c, value: n}}
				}
				ss = append(gpu("llama-a", 0.8, 1), gpu("llama-b", 0.2, 3)...)
			}
			writeVector(w, time.Now(), ss, nil, nil)
			return true
		}
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
// series gets no power (never 0).
func TestGPUPowerSummedByPod(t *testing.T) {
	f := newFakeProm(t)
	var powerQuery string
	f.set(func(f *fakeProm) {
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			if strings.Contains(r.URL.Path, "/label/") {
				writeJSON(w, http.StatusOK, map[string]any{"status": "success", "data": []string{"vllm:num_requests_running", "DCGM_FI_DEV_POWER_USAGE"}})
				return true
			}
			if !strings.HasSuffix(r.URL.Path, "/query") {
				return false
			}
			var ss []fakeSeries
			rep := func(pod, ip string, v float64) fakeSeries {
				return fakeSeries{labels: map[string]string{"model_name": "llama", "pod": pod, "namespace": "serve",
					"instance": ip + ":8000", "tokentop_engine": "vllm"}, value: v}
			}
			switch {
			case strings.Contains(q, "timestamp("), strings.Contains(q, "vllm:num_requests_running"):
				ss = []fakeSeries{rep("llama-a", "10.0.0.1", 2), rep("llama-b", "10.0.0.2", 2), rep("llama-c", "10.0.0.3", 2)}
			case strings.Contains(q, "DCGM_FI_DEV_POWER_USAGE"):
				powerQuery = q
				gpu := func(pod string, watts float64) fakeSeries {
					return fakeSeries{labels: map[string]string{"Hostname": "node-1", "instance": "10.1.0.9:9400", "pod": "dcgm-exporter-x",
						"namespace": "gpu-operator", "exported_pod": pod, "exported_namespace": "serve", "tokentop_engine": "dcgm"}, value: watts}
				}
				ss = []fakeSeries{gpu("llama-a", 310), gpu("llama-b", 3*280)}
			}
			writeVector(w, time.Now(), ss, nil, nil)
			return true
		}
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
		if len(p) != 1 || !within(p[0].Value, v, 1e-12) {
			t.Errorf("%s: GPU power %+v, want %v W", name, p, v)
		}
	}
	if p := rec.find(telemetry.KindSample, "llama-c/llama", telemetry.GPUPower); len(p) != 0 {
		t.Errorf("llama-c has no GPU series but got %+v", p)
	}
	if bw := rec.find(telemetry.KindSample, "llama-a/llama", telemetry.GPUMemBW); len(bw) != 0 {
		t.Errorf("power series read as DRAM activity: %+v", bw)
	}
}
