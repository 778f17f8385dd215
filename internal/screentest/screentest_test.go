package screentest

import (
	"strings"
	"testing"
)

// A grouped fleet screen with a GPU panel, as the main screen draws it.
const fleet = ` ttftop                     2 endpoints · 12:05:00
 sources: ● probe ok 42ms
 ENDPOINT▲                  TTFT p50/p99   SLO
 gpu-a:8000 · 2 endpoints · vllm · 1 BREACH
▸ org/model-8B               30ms/36ms     —
  100ms │⠒⠒⠒⠒⠒⠒⠒   20ms │⠒⠒⠒⠒⠒
  org/model-8B-FP8           42ms/1.2s     BREACH
   TTFT │⠒⠒⠒⠒⠒⠒⠒   TPOT │⠒⠒⠒⠒⠒
 gpu-c:8000/org/solo         38ms/45ms     —

 gpu-a:8000/org/model-8B · org/model-8B · http://gpu-a:8000
 GPU NAME   MEM used/total
   0 H100    71.2/79.6GiB
 Σ 1 GPUs (▼3 more)
 ALERTS 1 firing
 FIRING   gpu-a:8000/org/model-8B-FP8 ttft-p95 since 12:03:10 1m50s  TTFT 1.2s > 500ms
? help • q quit
`

func TestParse(t *testing.T) {
	sc, err := Parse(fleet)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range sc.Rows() {
		names = append(names, r.FullName())
	}
	if got := strings.Join(names, " "); got != "gpu-a:8000/org/model-8B gpu-a:8000/org/model-8B-FP8 gpu-c:8000/org/solo" {
		t.Errorf("rows %q", got)
	}
	if r := sc.Rows(); !r[0].Selected || r[1].Selected {
		t.Errorf("selection: %+v", r)
	}
	if !strings.Contains(sc.Info, "http://gpu-a:8000") || len(sc.GPUs) != 3 || len(sc.Alerts) != 1 || !strings.HasPrefix(sc.Footer, "?") {
		t.Errorf("sections: info %q, GPUs %q, alerts %q, footer %q", sc.Info, sc.GPUs, sc.Alerts, sc.Footer)
	}
	if n := BlankRun(sc.TableText()); n != 1 {
		t.Errorf("blank run in the table %d, want 1", n)
	}
	charts := 0
	for _, l := range sc.Table {
		if l.Kind == Chart {
			charts++
		}
	}
	if charts != 2 {
		t.Errorf("%d chart lines, want 2", charts)
	}
	if _, err := Parse("help screen\nno alerts\n"); err == nil {
		t.Error("a screen without the alerts pane parsed")
	}
}

// Apart finds every row and alert one endpoint, and says so when one
// reads as two.
func TestApart(t *testing.T) {
	names := []string{"gpu-a:8000/org/model-8B", "gpu-a:8000/org/model-8B-FP8", "gpu-c:8000/org/solo"}
	if rows, alerts := Apart(t, fleet, names); rows != 3 || alerts != 1 {
		t.Errorf("read %d rows, %d alerts", rows, alerts)
	}
	ft := &fakeT{TB: t}
	Apart(ft, strings.Replace(fleet, "org/model-8B-FP8  ", "org/model-8B…  ", 1), names)
	if !ft.failed {
		t.Error("a row that reads as two endpoints passed")
	}
}

type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Helper()               {}
