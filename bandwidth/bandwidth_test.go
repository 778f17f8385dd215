package bandwidth

import (
	"math"
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
