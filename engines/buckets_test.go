package engines

import (
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/ttftop/ttftop/internal/fixtures"
	"github.com/ttftop/ttftop/telemetry"
)

// A histogram's bucket bounds in the table are the engine's own, as a
// capture of it shows them (one series' le values, +Inf left out).
func TestBucketsMatchCapture(t *testing.T) {
	spec, _ := Lookup(telemetry.EngineVLLM)
	a := spec.Signals[telemetry.TPOT][0]
	body := fixtures.Read(t, "metrics", "vllm-v0.27-xpu-specdecode-mfu-metrics.txt")
	le := regexp.MustCompile(regexp.QuoteMeta(a.Bucket()) + `\{[^}]*le="([^"]+)"[^}]*model_name="qwen38-fp8"\}`)
	var got []float64
	for _, m := range le.FindAllStringSubmatch(body, -1) {
		if m[1] == "+Inf" {
			continue
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if len(got) == 0 || !slices.Equal(got, a.Buckets) {
		t.Errorf("%s buckets in the table %v, in the capture %v", a.Name, a.Buckets, got)
	}
}
