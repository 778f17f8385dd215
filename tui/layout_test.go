package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/internal/screentest"
	"github.com/ttftop/ttftop/telemetry"
)

// sizedStore has the first n of the fleet's endpoints, with the GPU
// fixture's five devices when gpus is set.
func sizedStore(n int, gpus bool) *telemetry.Store {
	sc := script{telemetry.NewStore(telemetry.StoreConfig{})}
	for i, name := range fleetNames()[:n] {
		model := name[strings.Index(name, "/")+1:]
		sc.s.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, Endpoint: name, At: t0,
			Info: &telemetry.Endpoint{Name: name, Model: model, Engine: telemetry.EngineVLLM, BaseURL: "http://" + name[:strings.Index(name, "/")]}})
		sc.probes(name, t0, tNow, 0.030+0.012*float64(i%6), 0.007+0.003*float64(i%4))
		sc.gauges(name, t0, tNow, 0.3, 0.5, 0.45)
	}
	if gpus {
		for _, o := range gpuObservations() {
			sc.s.Observe(o)
		}
	}
	return sc.s
}

// gpuObservations are the GPU fixture's devices.
func gpuObservations() []telemetry.Observation {
	var out []telemetry.Observation
	for _, d := range gpuFixtureStore().Snapshot(tNow, 5*time.Minute).GPUs {
		dev := d
		out = append(out, telemetry.Observation{Kind: telemetry.KindGPU, At: tNow.Add(-time.Second), Source: dcgmA, Interval: time.Second, GPU: &dev})
	}
	return out
}

// No band of the main screen stays blank, at any size from 80×24 to
// 240×60 with 1, 4, 7 or 13 endpoints, with and without GPUs: lines the
// rows do not need go to the alerts, a cut GPU panel, then the charts
// (at 160×50, 7 endpoints sat over twelve empty lines).
func TestNoBlankBand(t *testing.T) {
	for _, sz := range fleetSizes {
		for _, n := range []int{1, 4, 7, 13} {
			for _, gpus := range []bool{false, true} {
				m := New(sizedStore(n, gpus), fleetAlerts(), testOptions())
				m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
				refresh(m)
				frame := plain(m)
				sc, err := screentest.Parse(frame)
				if err != nil {
					t.Fatalf("%s, %d endpoints: %v\n%s", sizeName(sz), n, err, frame)
				}
				if got := len(sc.Rows()); got == 0 {
					t.Fatalf("%s, %d endpoints: no rows read\n%s", sizeName(sz), n, frame)
				}
				for _, sec := range []struct {
					name  string
					lines []string
				}{{"table", sc.TableText()}, {"GPU panel", sc.GPUs}, {"alerts", sc.Alerts}} {
					if run := screentest.BlankRun(sec.lines); run > 0 {
						t.Errorf("%s, %d endpoints, GPUs %v: %d blank lines in the %s\n%s", sizeName(sz), n, gpus, run, sec.name, frame)
					}
				}
			}
		}
	}
}

// At 240 columns the rows' charts run to the right edge, read for the
// width they are drawn at: on the first data (which switched the table
// to charts) and after a resize from 120×40. Read for the points of
// another layout they were stretched, a step per few cells, and stopped
// short of "now".
func TestChartsUseTheWidth(t *testing.T) {
	for _, c := range []struct {
		name string
		from [2]int
	}{{"first data", [2]int{240, 60}}, {"resized", [2]int{120, 40}}} {
		t.Run(c.name, func(t *testing.T) {
			tm := startWith(t, sizedStore(4, false), fleetAlerts(), testOptions(), c.from[0], c.from[1])
			waitOut(t, tm, "FIRING")
			if c.from[0] != 240 {
				settle(t, tm)
				tm.Send(tea.WindowSizeMsg{Width: 240, Height: 60})
			}
			frame := finishFrame(t, tm)
			sc, err := screentest.Parse(frame)
			if err != nil {
				t.Fatalf("%v\n%s", err, frame)
			}
			reach, rows := map[string]int{}, ""
			for _, l := range sc.Table {
				switch l.Kind {
				case screentest.Row:
					rows = l.Name
				case screentest.Chart:
					if strings.Contains(l.Text, "└") || strings.Contains(l.Text, "now") {
						continue // the axis and the time labels span the chart whatever it holds
					}
					reach[rows] = max(reach[rows], len([]rune(strings.TrimRight(l.Text, " "))))
				}
			}
			if len(reach) != 4 {
				t.Fatalf("want 4 rows with charts, read %v\n%s", reach, frame)
			}
			for name, r := range reach {
				if r < 240-3 {
					t.Errorf("%s: charts end at column %d of 240\n%s", name, r, frame)
				}
			}
		})
	}
}

// Lines the rows leave go to the alerts before the charts grow past
// their usual cap: one endpoint at 240×60 with 20 alerts shows every
// alert, the chart taking the rest.
func TestSpareLinesShowEveryAlertFirst(t *testing.T) {
	al := fleetAlerts()
	first := al.list[0]
	al.list = nil
	for i := range 20 {
		a := first
		a.Objective = "ttft-p95-" + itoa(i)
		al.list = append(al.list, a)
	}
	m := New(sizedStore(1, false), al, testOptions())
	m.Update(tea.WindowSizeMsg{Width: 240, Height: 60})
	refresh(m)
	sc, err := screentest.Parse(plain(m))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Alerts) != 20 || screentest.BlankRun(sc.TableText()) > 0 {
		t.Fatalf("want all 20 alerts and no blank line, read %d alerts:\n%s", len(sc.Alerts), plain(m))
	}
}
