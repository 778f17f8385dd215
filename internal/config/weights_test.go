package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttftop/ttftop/bandwidth"
)

// Every invalid weights field is a load error at its key's line, saying
// what is accepted; an endpoint's weights and a prometheus entry's alike.
func TestInvalidWeightsAreLoadErrors(t *testing.T) {
	const ep = "endpoints:\n  - name: a\n    url: http://a:8000\n    weights:\n"
	const prom = "prometheus:\n  - url: http://p:9090\n    weights:\n"
	cases := []struct{ name, yaml, want string }{
		{"parameters missing", ep + "      dtype: bf16\n      gpu: H200\n",
			"line 4: endpoints[0] (a): weights: parameters missing: the model's parameter count, e.g. 8e9"},
		{"parameters negative", ep + "      gpu: H200\n      parameters: -8e9\n",
			"line 6: endpoints[0] (a): weights: parameters -8e+09 must be a positive number, e.g. 8e9"},
		{"parameters infinite", ep + "      gpu: H200\n      parameters: .inf\n",
			"line 6: endpoints[0] (a): weights: parameters +Inf must be a positive number, e.g. 8e9"},
		{"dtype unknown", ep + "      parameters: 8e9\n      dtype: bf17\n      gpu: H200\n",
			`line 6: endpoints[0] (a): weights: dtype "bf17" unknown: use one of bf16, fp16, bfloat16, float16, fp32, float32, fp8, int8, e4m3, e5m2, int4, fp4, nf4, awq, gptq`},
		{"tensor_parallel 0", ep + "      parameters: 8e9\n      gpu: H200\n      tensor_parallel: 0\n",
			"line 7: endpoints[0] (a): weights: tensor_parallel 0 must be at least 1 (the GPUs one replica spans)"},
		{"tensor_parallel negative", ep + "      parameters: 8e9\n      gpu: H200\n      tensor_parallel: -2\n",
			"line 7: endpoints[0] (a): weights: tensor_parallel -2 must be at least 1 (the GPUs one replica spans)"},
		{"kv negative", ep + "      parameters: 8e9\n      gpu: H200\n      kv_bytes_per_token: -5\n",
			"line 7: endpoints[0] (a): weights: kv_bytes_per_token -5 must be 0 (no KV term) or more"},
		{"no gpu, no peak", ep + "      parameters: 8e9\n",
			`line 4: endpoints[0] (a): weights: gpu or peak_bandwidth missing: name the GPU (e.g. H200, "H100 SXM") or give its peak bandwidth (e.g. 3.35TB/s)`},
		{"ambiguous gpu", ep + "      parameters: 8e9\n      gpu: A100\n",
			`line 6: endpoints[0] (a): weights: gpu: GPU "A100" is ambiguous: it could be A100 40GB, A100 80GB PCIe or A100 80GB SXM; name one, or set peak_bandwidth`},
		{"unknown gpu", ep + "      parameters: 8e9\n      gpu: Tesla T4\n",
			`line 6: endpoints[0] (a): weights: gpu: unknown GPU "Tesla T4": known are A10, A10G, L4, L40S, A100 40GB, A100 80GB PCIe, A100 80GB SXM, H100 SXM, H100 PCIe, H100 NVL, H200, B200, MI300X`},
		{"peak not a bandwidth", ep + "      parameters: 8e9\n      peak_bandwidth: 3.35TiB/s\n",
			`line 6: peak_bandwidth "3.35TiB/s" is not a bandwidth: write bytes per second (3.35e12) or a number with TB/s, GB/s, MB/s, kB/s or B/s (3.35TB/s)`},
		{"peak negative", ep + "      parameters: 8e9\n      peak_bandwidth: -1\n",
			`line 6: peak_bandwidth "-1" must be positive`},
		{"prometheus: the exploratory test's entry", prom +
			`      "*": {parameters: -8e9, dtype: bf17, gpu: "NVIDIA H100 80GB HBM3", kv_bytes_per_token: -5, tensor_parallel: 0}` + "\n",
			`line 4: prometheus[0]: weights["*"]: parameters -8e+09 must be a positive number, e.g. 8e9; ` +
				`line 4: prometheus[0]: weights["*"]: dtype "bf17" unknown: use one of bf16,`},
		{"prometheus: one model's line", prom + "      a: {parameters: 1e9, gpu: H200}\n      b:\n        gpu: H100\n        parameters: 1e9\n",
			`line 6: prometheus[0]: weights["b"]: gpu: GPU "H100" is ambiguous: it could be H100 SXM, H100 PCIe or H100 NVL`},
	}
	for _, c := range cases {
		_, err := Parse(strings.NewReader(c.yaml))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: err\n  %v\nwant prefix\n  %s", c.name, err, c.want)
		}
	}
	// All five problems of the exploratory test's entry are reported.
	_, err := Parse(strings.NewReader(cases[12].yaml))
	for _, want := range []string{"parameters -8e+09", `dtype "bf17"`, "tensor_parallel 0", "kv_bytes_per_token -5"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("exploratory entry: %v lacks %q", err, want)
		}
	}
}

// Short names resolve, any case; an absent tensor_parallel is 1 and an
// absent dtype bf16; peak_bandwidth overrides the GPU, even an unknown one.
func TestValidWeights(t *testing.T) {
	for _, gpu := range []string{"H200", "h200", "L4", "a10g", "MI300X", "mi300x", "H100 SXM", "NVIDIA H100 80GB HBM3", "A100 80GB PCIe"} {
		c, err := Parse(strings.NewReader("endpoints:\n  - url: http://a:8000\n    weights: {parameters: 8e9, gpu: \"" + gpu + "\"}\n"))
		if err != nil {
			t.Errorf("%q: %v", gpu, err)
			continue
		}
		m := c.Endpoints[0].Weights.Model()
		want, _ := bandwidth.Resolve(gpu)
		if p, err := m.Peak(); err != nil || p != want.Peak || m.GPUs() != 1 || m.BytesPerParameter != 2 {
			t.Errorf("%q: peak %v %v, GPUs %d, bytes %v", gpu, p, err, m.GPUs(), m.BytesPerParameter)
		}
	}
	for in, want := range map[string]float64{"3.35TB/s": 3.35e12, "3.35e12": 3.35e12, "900 GB/s": 900e9, "1600000000000": 1.6e12} {
		c, err := Parse(strings.NewReader("prometheus:\n  - url: http://p:9090\n    weights:\n      \"*\": {parameters: 8e9, dtype: FP8, tensor_parallel: 4, gpu: Tesla T4, peak_bandwidth: " + in + "}\n"))
		if err != nil {
			t.Errorf("peak %s: %v", in, err)
			continue
		}
		m := c.Prometheus[0].Weights["*"].Model()
		if p, err := m.Peak(); err != nil || p != want || m.BytesPerParameter != 1 || m.GPUs() != 4 {
			t.Errorf("peak %s: %v %v, %+v", in, p, err, m)
		}
	}
}

// A config built without a file (flags, the demo) is checked too, its
// errors without a line.
func TestWeightsFromCodeAreChecked(t *testing.T) {
	c := &Config{Endpoints: []Endpoint{{URL: "http://a:8000", Weights: &bandwidth.Weights{Parameters: 8e9, GPU: "H100"}}}}
	err := c.Complete()
	if err == nil || !strings.HasPrefix(err.Error(), `endpoints[0] (a:8000): weights: gpu: GPU "H100" is ambiguous`) {
		t.Fatalf("err %v", err)
	}
	c = &Config{Endpoints: []Endpoint{{URL: "http://a:8000", Weights: &bandwidth.Weights{Parameters: 8e9, GPU: "H200"}}}}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
}

// Every example loads, and each weights it gives has a peak bandwidth.
func TestExamplesWeightsResolve(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.y*ml")
	if err != nil || len(files) == 0 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		c, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		var models []bandwidth.Model
		for _, e := range c.Endpoints {
			if e.Weights != nil {
				models = append(models, e.Weights.Model())
			}
		}
		for _, p := range c.Prometheus {
			for _, w := range p.Weights {
				models = append(models, w.Model())
			}
		}
		if len(models) == 0 {
			t.Logf("%s: no weights", filepath.Base(f))
		}
		for _, m := range models {
			if p, err := m.Peak(); err != nil || p <= 0 || m.Parameters <= 0 {
				t.Errorf("%s: %+v: peak %v %v", f, m, p, err)
			}
		}
	}
}
