package bandwidth

import (
	"math"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	for name, want := range map[string]float64{
		"NVIDIA H100 80GB HBM3": 3.35e12,
		"NVIDIA H100 PCIe":      2.0e12,
		"NVIDIA H100 NVL":       3.9e12,
		"NVIDIA H200":           4.8e12,
		"NVIDIA H200 NVL":       4.8e12,
		"NVIDIA A100-SXM4-40GB": 1555e9,
		"NVIDIA A100-PCIE-40GB": 1555e9,
		"NVIDIA A100 80GB PCIe": 1935e9,
		"NVIDIA A100-SXM4-80GB": 2039e9,
		"NVIDIA A10G":           600e9,
		"NVIDIA A10":            600e9,
		"NVIDIA L4":             300e9,
		"NVIDIA L40S":           864e9,
		"NVIDIA B200":           8e12,
		"AMD Instinct MI300X":   5.3e12,
		"Tesla T4":              0,
		"NVIDIA H100":           0, // ambiguous
		"NVIDIA GH200 480GB":    0,
		"":                      0,
		"NVIDIA L40":            0,
		"NVIDIA A100 (unknown)": 0,
		"nvidia h100 80gb hbm3": 3.35e12,
	} {
		g, ok := Lookup(name)
		if ok != (want > 0) || g.Peak != want {
			t.Errorf("%q: got %+v %v, want %v", name, g, ok, want)
		}
	}
	if g, ok := LookupWith("Tesla T4", map[string]float64{"tesla t4": 320e9}); !ok || g.Peak != 320e9 {
		t.Errorf("override: %+v %v", g, ok)
	}
}

// The worked example of docs/engines.md: Llama-3.1-8B BF16 on 1×H100 SXM,
// 16 requests × 2,048 tokens, mean ITL 9 ms → MBU 67.5 % (53.3 % without KV).
func TestMBUWorkedExample(t *testing.T) {
	m := Model{Parameters: 8.03e9, BytesPerParameter: 2, GPU: "NVIDIA H100 80GB HBM3",
		KVBytesPerToken: KVBytesPerToken(32, 8, 128, 2)}
	if m.KVBytesPerToken != 131072 {
		t.Fatalf("KV bytes/token %v", m.KVBytesPerToken)
	}
	peak, err := m.Peak()
	if err != nil {
		t.Fatal(err)
	}
	e := Estimate{WeightBytes: m.WeightBytes(), KVBytes: 16 * 2048 * m.KVBytesPerToken, StepSeconds: 0.009, Peak: peak, GPUs: m.GPUs()}
	got, ok := e.MBU()
	if !ok || math.Abs(got-0.675) > 0.001 {
		t.Fatalf("MBU %v %v, want 0.675", got, ok)
	}
	e.KVBytes = 0
	if got, _ := e.MBU(); math.Abs(got-0.533) > 0.001 {
		t.Fatalf("weights-only MBU %v, want 0.533", got)
	}
	if _, ok := (Estimate{WeightBytes: 1, StepSeconds: 0, Peak: 1, GPUs: 1}).MBU(); ok {
		t.Fatal("zero step time gave an estimate")
	}
	if _, err := (Model{GPU: "Tesla T4"}).Peak(); err == nil {
		t.Fatal("unknown GPU gave a peak")
	}
}

// Model.MBU, the one implementation both sources call: measured when the
// bytes counter moved (per-GPU peak, not ×GPUs), else the estimate
// (approx); a KV term without KV tokens, or no decode step, is no figure.
func TestModelMBU(t *testing.T) {
	m := Model{Parameters: 8e9, BytesPerParameter: 2, PeakBandwidth: 2e12, TensorParallel: 2, KVBytesPerToken: 1e5}
	cases := []struct {
		name       string
		r          Reading
		want       float64
		approx, ok bool
	}{
		{"measured", Reading{ReadBytesPerS: 1e12, HasReadBytes: true, StepSeconds: 0.01}, 0.5, false, true},
		{"counter off: estimate", Reading{ReadBytesPerS: 0, HasReadBytes: true, StepSeconds: 0.01, KVTokens: 4e4, HasKVTokens: true}, (16e9 + 4e9) / 0.01 / 4e12, true, true},
		{"KV term without tokens", Reading{StepSeconds: 0.01}, 0, false, false},
		{"no decode step", Reading{KVTokens: 1, HasKVTokens: true}, 0, false, false},
	}
	for _, c := range cases {
		v, approx, ok, err := m.MBU(c.r)
		if err != nil || ok != c.ok || approx != c.approx || math.Abs(v-c.want) > 1e-12 {
			t.Errorf("%s: %v %v %v %v, want %v %v %v", c.name, v, approx, ok, err, c.want, c.approx, c.ok)
		}
	}
	if _, _, ok, err := (Model{Parameters: 1, BytesPerParameter: 2, GPU: "Tesla T4"}).MBU(Reading{StepSeconds: 1}); ok || err == nil {
		t.Errorf("unknown GPU: ok %v err %v", ok, err)
	}
	models := map[string]Model{"a": {Parameters: 1}, "*": {Parameters: 2}}
	if m, ok := ModelFor(models, "a"); !ok || m.Parameters != 1 {
		t.Errorf("a: %+v", m)
	}
	if m, ok := ModelFor(models, "b"); !ok || m.Parameters != 2 {
		t.Errorf("b falls back on *: %+v", m)
	}
	if _, ok := ModelFor(map[string]Model{"a": {}}, "b"); ok {
		t.Error("b without * described")
	}
}

// A config's gpu: the table's names and unambiguous short names resolve,
// any case; an ambiguous family names its members (narrowed by a memory
// size given); an unknown GPU lists the known names.
func TestResolve(t *testing.T) {
	for name, want := range map[string]float64{
		"H200": 4.8e12, "h200": 4.8e12, "L4": 300e9, "l4": 300e9, "A10G": 600e9, "a10g": 600e9, "A10": 600e9,
		"MI300X": 5.3e12, "mi300x": 5.3e12, "B200": 8e12, "L40S": 864e9, "H100 SXM": 3.35e12, "h100 pcie": 2.0e12,
		"H100 NVL": 3.9e12, "A100 40GB": 1555e9, "A100 80GB PCIe": 1935e9, "A100 80GB SXM": 2039e9, "H100-SXM5": 3.35e12,
		"NVIDIA H100 80GB HBM3": 3.35e12,
	} {
		g, err := Resolve(name)
		if err != nil || g.Peak != want {
			t.Errorf("%q: %+v %v, want %v", name, g, err, want)
		}
	}
	for _, g := range Table() {
		if r, err := Resolve(g.Name); err != nil || r.Name != g.Name {
			t.Errorf("table name %q resolves to %+v %v", g.Name, r, err)
		}
	}
	for name, want := range map[string]string{
		"H100":        `GPU "H100" is ambiguous: it could be H100 SXM, H100 PCIe or H100 NVL; name one, or set peak_bandwidth`,
		"a100":        `GPU "a100" is ambiguous: it could be A100 40GB, A100 80GB PCIe or A100 80GB SXM; name one, or set peak_bandwidth`,
		"NVIDIA H100": `GPU "NVIDIA H100" is ambiguous: it could be H100 SXM, H100 PCIe or H100 NVL; name one, or set peak_bandwidth`,
		"H100 80GB":   `GPU "H100 80GB" is ambiguous: it could be H100 SXM or H100 PCIe; name one, or set peak_bandwidth`,
		"Tesla T4": `unknown GPU "Tesla T4": known are A10, A10G, L4, L40S, A100 40GB, A100 80GB PCIe, A100 80GB SXM, H100 SXM, ` +
			`H100 PCIe, H100 NVL, H200, B200, MI300X (or the names dcgm-exporter and nvidia-smi report for them); else set peak_bandwidth`,
		"GH200": `GPU "GH200" (Grace Hopper) is not in the table: its peak is 4.0 or 4.9 TB/s depending on its memory; set peak_bandwidth`,
		"":      "no GPU named",
	} {
		if _, err := Resolve(name); err == nil || err.Error() != want {
			t.Errorf("%q: err %v\nwant %s", name, err, want)
		}
	}
	if _, err := (Model{GPU: "A100"}).Peak(); err == nil || !strings.Contains(err.Error(), "A100 80GB SXM") {
		t.Errorf("Model.Peak of an ambiguous GPU: %v", err)
	}
	if p, err := (Model{GPU: "A100", PeakBandwidth: 1.6e12}).Peak(); err != nil || p != 1.6e12 {
		t.Errorf("peak bandwidth does not override the GPU: %v %v", p, err)
	}
}

func TestParsePeak(t *testing.T) {
	for in, want := range map[string]float64{
		"3.35e12": 3.35e12, "3350000000000": 3.35e12, "3.35TB/s": 3.35e12, "3.35 TB/s": 3.35e12, "900GB/s": 900e9,
		" 600 GB/s ": 600e9, "500MB/s": 500e6, "1kB/s": 1e3, "42B/s": 42,
	} {
		if got, err := ParsePeak(in); err != nil || math.Abs(got-want) > want*1e-12 {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"3.35TiB/s": "is not a bandwidth", "3.35Tb/s": "is not a bandwidth", "3.35 TB": "is not a bandwidth", "fast": "is not a bandwidth",
		"": "is not a bandwidth", "Inf": "is not a bandwidth", "0": "must be positive", "-3e12": "must be positive", "-1TB/s": "must be positive",
	} {
		if _, err := ParsePeak(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", in, err, want)
		}
	}
}
