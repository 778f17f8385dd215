package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/ttftop/ttftop/telemetry"
)

func fp(v float64) *float64 { return &v }

const dcgmA, dcgmB = "dcgm:http://gpu-a:9400/metrics", "dcgm:http://gpu-b:9400/metrics"

// gpuFixtureStore is the fixture with two hosts' GPUs: gpu-a's two H100s
// serve llama-8b; gpu-b's first is at its power cap and hot, its second
// has only memory busy time and went quiet 40 s ago; a MIG slice and an
// unclaimed GPU complete the set.
func gpuFixtureStore() *telemetry.Store {
	s := fixtureStore()
	const gib = 1 << 30
	devs := []struct {
		at  time.Time
		src string
		d   telemetry.GPUDevice
	}{
		{tNow.Add(-time.Second), dcgmA, telemetry.GPUDevice{Key: "gpu-a/GPU-0", Host: "gpu-a", Index: "0", Name: "NVIDIA H100 80GB HBM3",
			Endpoints: []string{"llama-8b"}, MemUsedBytes: fp(71.2 * gib), MemTotalBytes: fp(79.6 * gib), DRAMActiveRatio: fp(0.48),
			UtilRatio: fp(0.97), PowerW: fp(412), PowerLimitW: fp(700), TemperatureCelsius: fp(61)}},
		{tNow.Add(-time.Second), dcgmA, telemetry.GPUDevice{Key: "gpu-a/GPU-1", Host: "gpu-a", Index: "1", Name: "NVIDIA H100 80GB HBM3",
			Endpoints: []string{"llama-8b"}, MemUsedBytes: fp(71.2 * gib), MemTotalBytes: fp(79.6 * gib), DRAMActiveRatio: fp(0.46),
			UtilRatio: fp(0.96), PowerW: fp(398), PowerLimitW: fp(700), TemperatureCelsius: fp(59)}},
		{tNow.Add(-time.Second), dcgmB, telemetry.GPUDevice{Key: "gpu-b/GPU-2", Host: "gpu-b", Index: "0", Name: "NVIDIA H200",
			Endpoints: []string{"qwen-72b"}, MemUsedBytes: fp(131 * gib), MemTotalBytes: fp(140.4 * gib), DRAMActiveRatio: fp(0.81),
			UtilRatio: fp(1), PowerW: fp(697), PowerLimitW: fp(700), TemperatureCelsius: fp(87)}},
		{tNow.Add(-40 * time.Second), dcgmB, telemetry.GPUDevice{Key: "gpu-b/GPU-3", Host: "gpu-b", Index: "1", Name: "NVIDIA H200",
			Endpoints: []string{"qwen-72b"}, MemUsedBytes: fp(131 * gib), MemTotalBytes: fp(140.4 * gib), MemBusyRatio: fp(0.35)}},
		{tNow.Add(-time.Second), dcgmB, telemetry.GPUDevice{Key: "gpu-b/GPU-4/mig1", Host: "gpu-b", Index: "2", MIG: "1", Name: "NVIDIA A100-SXM4-80GB",
			MemUsedBytes: fp(0.5 * gib), MemTotalBytes: fp(9.5 * gib), PowerW: fp(61)}},
	}
	for _, d := range devs {
		dev := d.d
		s.Observe(telemetry.Observation{Kind: telemetry.KindGPU, At: d.at, Source: d.src, Interval: time.Second, GPU: &dev})
	}
	// llama-8b's two GPUs draw 810 W ± 40 W while the engine writes 2,000
	// output tokens a second: about 0.405 J/token.
	sc := script{s}
	for i, at := 0, t0; at.Before(tNow); i, at = i+1, at.Add(5*time.Second) {
		sc.sample("llama-8b", telemetry.GPUPower, 810+40*wave(i, 13), at, dcgmA, 5*time.Second)
		sc.sample("llama-8b", telemetry.OutputTPS, 2000, at, scrapeSrc, 5*time.Second)
	}
	return s
}

func startGPUs(t *testing.T, w, h int) *teatest.TestModel {
	t.Helper()
	return startWith(t, gpuFixtureStore(), fixtureAlerts(), testOptions(), w, h)
}

// The main screen with the GPU panel, shown by default: at 160×50 with
// bars, hosts and endpoints; at 80×24 the fixed columns and as many GPUs
// as half the body holds, the total saying how many are left out.
func TestGoldenGPUPanel(t *testing.T) {
	for _, sz := range [][2]int{{160, 50}, {80, 24}} {
		t.Run(sizeName(sz), func(t *testing.T) {
			tm := startGPUs(t, sz[0], sz[1])
			waitOut(t, tm, "5 GPUs")
			finish(t, tm)
		})
	}
}

// u hides the panel and shows it again.
func TestGPUPanelToggle(t *testing.T) {
	a := newApp(gpuFixtureStore(), fixtureAlerts(), testOptions())
	a.resize(160, 50)
	msg := a.fetch()()
	a.onData(msg.(dataMsg))
	if !strings.Contains(a.render(), "Σ 5 GPUs") || a.layoutGPUH != 7 {
		t.Fatalf("panel not shown by default (height %d)", a.layoutGPUH)
	}
	a.onKey(keyMsg("u"))
	if strings.Contains(a.render(), "5 GPUs") || a.layoutGPUH != 0 {
		t.Fatal("u did not hide the panel")
	}
	if !strings.Contains(a.render(), "GPU panel hidden") {
		t.Fatal("hiding the panel does not say how to show it")
	}
	a.onKey(keyMsg("u"))
	if view := a.render(); !strings.Contains(view, "5 GPUs") {
		t.Fatal("u did not show the panel again")
	} else if strings.Contains(view, "hidden") {
		t.Fatalf("the panel is back but the header says it is hidden:\n%s", view)
	}
	// Without GPU data there is no panel and the table keeps the room.
	b := newApp(fixtureStore(), fixtureAlerts(), testOptions())
	b.resize(160, 50)
	b.onData(b.fetch()().(dataMsg))
	if b.layoutGPUH != 0 || strings.Contains(b.render(), "GPUs") {
		t.Fatal("panel without GPU data")
	}
}

// With the GPU panel on the main screen every frame still fits the
// terminal, at every width and height (the resize fuzz, with GPUs).
func TestResizeWithGPUPanel(t *testing.T) {
	for _, ascii := range []bool{false, true} {
		opts := testOptions()
		opts.ASCII = ascii
		m := New(gpuFixtureStore(), fixtureAlerts(), opts)
		m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
		refresh(m)
		step := sweepStep
		if testing.Short() {
			step = 5
		}
		for w := 0; w <= 240; w += step {
			for _, h := range []int{0, 1, 10, 14, 24, 40, 60} {
				m.Update(tea.WindowSizeMsg{Width: w, Height: h})
				checkFrame(t, m, w, h, "main+gpus")
			}
		}
	}
}

// The detail view's GPU section: power with its trend, and energy per
// token naming the server's token counter it divides by.
func TestGoldenGPUDetail(t *testing.T) {
	tm := startGPUs(t, 120, 40)
	waitOut(t, tm, "5 GPUs")
	send(tm, "/", "8", "b", "enter", "enter")
	waitOut(t, tm, "J/token (srv)")
	finish(t, tm)
}

// A refresh where only a GPU's figures changed is redrawn: the
// fingerprint covers the GPU panel's data.
func TestFingerprintCoversGPUs(t *testing.T) {
	a := dataMsg{snap: telemetry.Snapshot{GPUs: []telemetry.GPUDevice{{Key: "h/0", PowerW: fp(100)}}}}
	b := dataMsg{snap: telemetry.Snapshot{GPUs: []telemetry.GPUDevice{{Key: "h/0", PowerW: fp(101)}}}}
	if fingerprint(&a) == fingerprint(&b) {
		t.Fatal("a GPU's power changed and the fingerprint did not")
	}
}

// twelveGPUStore is the fixture with one host's twelve GPUs, more than
// the panel holds at 80×24.
func twelveGPUStore() *telemetry.Store {
	s := fixtureStore()
	const gib = 1 << 30
	for i := range 12 {
		d := telemetry.GPUDevice{Key: "gpu-a/GPU-" + itoa(i), Host: "gpu-a", Index: itoa(i), Name: "NVIDIA H100 80GB HBM3",
			Endpoints: []string{"llama-8b"}, MemUsedBytes: fp(float64(60+i) * gib), MemTotalBytes: fp(79.6 * gib),
			DRAMActiveRatio: fp(0.4 + 0.01*float64(i)), UtilRatio: fp(0.9), PowerW: fp(float64(400 + 10*i)), PowerLimitW: fp(700),
			TemperatureCelsius: fp(float64(55 + i))}
		s.Observe(telemetry.Observation{Kind: telemetry.KindGPU, At: tNow.Add(-time.Second), Source: dcgmA, Interval: time.Second, GPU: &d})
	}
	return s
}

// Twelve GPUs at 80×24: the panel shows what fits and says which; tab
// gives it the keys (its title marked, the footer naming its keys) and
// G scrolls to the last GPU.
func TestGoldenGPUPanelScroll(t *testing.T) {
	for _, c := range []struct {
		name string
		keys []string
	}{
		{"first", nil},
		{"scrolled", []string{"tab", "G"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tm := startWith(t, twelveGPUStore(), fixtureAlerts(), testOptions(), 80, 24)
			waitOut(t, tm, "12 GPUs")
			send(tm, c.keys...) // settled before the golden: keys are applied in order
			finish(t, tm)
		})
	}
}

// Every GPU can be reached from the keyboard: tab into the panel, then
// down one at a time shows each device once; esc gives the keys back to
// the table, whose cursor moves again.
func TestGPUPanelKeysReachEveryGPU(t *testing.T) {
	m := New(twelveGPUStore(), fixtureAlerts(), testOptions())
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	refresh(m)
	seen := map[string]bool{}
	collect := func() {
		for _, l := range strings.Split(plain(m), "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[1] == "NVIDIA" {
				seen[f[0]] = true
			}
		}
	}
	collect()
	if len(seen) == 12 {
		t.Fatal("all 12 GPUs fit at 80x24: the test needs a cut panel")
	}
	press(m, "tab")
	if m.a.focus != paneGPUs || !strings.Contains(plain(m), "▸GPU") || !strings.Contains(plain(m), "scroll GPUs") {
		t.Fatalf("tab did not give the GPU panel the keys:\n%s", plain(m))
	}
	for range 12 {
		press(m, "down")
		collect()
	}
	if len(seen) != 12 {
		t.Fatalf("down reached %d of 12 GPUs: %v", len(seen), seen)
	}
	sel, _ := m.a.table.Selected()
	press(m, "esc", "down")
	if now, _ := m.a.table.Selected(); m.a.focus != paneTable || now.Name() == sel.Name() {
		t.Fatalf("esc did not give the keys back to the table (focus %v)", m.a.focus)
	}
}

// QA: in PromQL mode u said "no GPU data: give --dcgm or --nvidia-smi"
// while the table showed DCGM DRAM% read through PromQL. The note fits
// the mode: PromQL's GPU figures are per replica, joined from DCGM series.
func TestNoGPUPanelNoteFitsTheMode(t *testing.T) {
	noteAfterU := func(store *telemetry.Store) string {
		m := New(store, nil, testOptions())
		m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
		refresh(m)
		press(m, "u", "u") // hidden, then shown again: no devices to show
		return m.a.note
	}
	if got := noteAfterU(fixtureStore()); got != "no GPU data: give --dcgm or --nvidia-smi" {
		t.Errorf("direct sources: note %q", got)
	}
	if got := noteAfterU(promFleetStore()); !strings.HasPrefix(got, "PromQL: no DCGM series joined to a replica") {
		t.Errorf("PromQL without DCGM series: note %q", got)
	}
	withDCGM := promFleetStore()
	replica := "prod/a/10.0.0.1:8000/meta-llama/Llama-3.1-8B-Instruct"
	withDCGM.Observe(telemetry.Observation{Kind: telemetry.KindSample, Endpoint: replica, Signal: telemetry.GPUMemBW,
		Value: 0.42, At: tNow, Source: promSrc, Interval: 15 * time.Second})
	got := noteAfterU(withDCGM)
	if !strings.HasPrefix(got, "GPU figures per replica are in the rows") {
		t.Errorf("PromQL with DCGM DRAM: note %q", got)
	}
	t.Log(got)
}
