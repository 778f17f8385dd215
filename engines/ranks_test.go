package engines

import (
	"strings"
	"testing"

	"github.com/ttftop/ttftop/internal/fixtures"
	"github.com/ttftop/ttftop/sources/scrape/expo"
	"github.com/ttftop/ttftop/telemetry"
)

// vLLM V1's rank label is on every series of every signal family the
// table reads from the real V1 captures (one rank there: engine="0"), and
// on none of the V0 capture's (no data parallelism before V1).
func TestVLLMRankLabelInCaptures(t *testing.T) {
	spec, _ := Lookup(telemetry.EngineVLLM)
	for file, want := range map[string]bool{"vllm-v0.10-metrics.txt": true, "vllm-v0.27-xpu-specdecode-mfu-metrics.txt": true,
		"vllm-v0.4-metrics.txt": false} {
		body := fixtures.Read(t, "metrics", file)
		if !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		page, err := expo.Parse(body, expo.Options{})
		if err != nil {
			t.Fatal(err)
		}
		read := 0
		for _, sig := range spec.SignalOrder() {
			for _, a := range spec.Signals[sig] {
				f := page.Families[a.Name]
				if f == nil {
					continue
				}
				for _, ser := range f.Series {
					read++
					if got := ser.Label(spec.RankLabels[0]); (got == "0") != want {
						t.Errorf("%s: %s{%s} has %s=%q", file, a.Name, ser.Key, spec.RankLabels[0], got)
					}
				}
			}
		}
		if read == 0 {
			t.Errorf("%s: no series of the table's families", file)
		}
	}
}
