package record

import (
	"slices"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// A GPU device state survives a recording as it was observed.
func TestGPUDeviceRoundTrip(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	obs := []telemetry.Observation{{Kind: telemetry.KindGPU, At: at, Source: "dcgm:http://h:9400/metrics", Interval: time.Second,
		GPU: &telemetry.GPUDevice{Key: "h/GPU-1", Host: "h", Index: "1", UUID: "GPU-1", Name: "NVIDIA H200",
			Source: "dcgm:http://h:9400/metrics", Endpoints: []string{"h:8000/m"}, MemUsedBytes: p(1 << 34), MemTotalBytes: p(1 << 37),
			DRAMActiveRatio: p(0.42), UtilRatio: p(1), PowerW: p(512.5), PowerLimitW: p(700), TemperatureCelsius: p(64),
			EnergyJ: p(123456.789), ObservedAt: at}}}
	got, err := readAll(t, record(t, "gpu.jsonl", obs))
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, got, obs)
}

// The seek preamble keeps each GPU's latest state, one per source and
// device, so a replay sought past a checkpoint still lists every GPU.
func TestStateKeepsEachGPU(t *testing.T) {
	var s stateLines
	dev := func(src, key string) telemetry.Observation {
		return telemetry.Observation{Kind: telemetry.KindGPU, Source: src, GPU: &telemetry.GPUDevice{Key: key}}
	}
	s.update(dev("dcgm:http://a:9400/metrics", "a/0"), []byte("a0"))
	s.update(dev("dcgm:http://a:9400/metrics", "a/1"), []byte("a1"))
	s.update(dev("dcgm:http://a:9400/metrics", "a/0"), []byte("a0'"))
	s.update(dev("dcgm:http://b:9400/metrics", "a/0"), []byte("b0"))
	var got []string
	for _, l := range s.lines() {
		got = append(got, string(l))
	}
	if !slices.Equal(got, []string{"a1", "a0'", "b0"}) {
		t.Errorf("kept %q, want each device's latest: [a1 a0' b0]", got)
	}
}
