package gpus

import (
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
)

func fp(v float64) *float64 { return &v }

func panel(devs []telemetry.GPUDevice) *Model {
	th, _ := themes.Resolve("mono", func(string) string { return "" })
	ctx := &common.Context{Styles: themes.NewStyles(th), Glyphs: themes.NewGlyphs(false)}
	m := New(ctx)
	m.SetDevices(devs)
	return &m
}

func threeGPUs() []telemetry.GPUDevice {
	const gib = 1 << 30
	return []telemetry.GPUDevice{
		{Key: "a/0", Host: "a", Index: "0", Name: "NVIDIA H100 80GB HBM3", MemUsedBytes: fp(60 * gib), MemTotalBytes: fp(80 * gib),
			DRAMActiveRatio: fp(0.5), UtilRatio: fp(0.9), PowerW: fp(400.4), PowerLimitW: fp(700), TemperatureCelsius: fp(60)},
		{Key: "a/1", Host: "a", Index: "1", Name: "NVIDIA H100 80GB HBM3", MemUsedBytes: fp(20 * gib), MemTotalBytes: fp(80 * gib),
			DRAMActiveRatio: fp(0.3), UtilRatio: fp(0.5), PowerW: fp(200), PowerLimitW: fp(700), TemperatureCelsius: fp(72)},
		// Reports nothing but its name: every figure unknown, never 0.
		{Key: "a/2", Host: "a", Index: "2", Name: "NVIDIA L4"},
	}
}

// The total line, computed by hand: memory 60+20 = 80 of 160 GiB; DRAM
// (0.5+0.3)/2 = 40%; util (0.9+0.5)/2 = 70%; power 400.4+200 = 600 W of
// 1400 W; hottest 72 °C. The L4 adds nothing and shows dashes.
func TestPanelTotalAndUnknowns(t *testing.T) {
	m := panel(threeGPUs())
	m.SetSize(80, m.Want())
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	if len(lines) != 5 {
		t.Fatalf("want title, 3 GPUs, total; got %q", lines)
	}
	total := strings.Fields(lines[4])
	if strings.Join(total, " ") != "Σ 3 GPUs 80.0/160GiB 40% 70% 600/1400W 72°C" {
		t.Fatalf("total %q", lines[4])
	}
	l4 := strings.Fields(lines[3])
	if strings.Join(l4[3:8], " ") != "— — — — —" {
		t.Fatalf("unknown figures must be dashes: %q", lines[3])
	}
}

// --ascii draws the panel in ASCII only.
func TestPanelASCII(t *testing.T) {
	m := panel(threeGPUs())
	m.ctx.Glyphs = themes.NewGlyphs(true)
	m.SetSize(160, m.Want())
	v := ansi.Strip(m.View())
	for _, r := range v {
		if r > 0x7e && r != '\n' {
			t.Fatalf("non-ASCII %q in %s", r, v)
		}
	}
	if !strings.Contains(v, "total 3 GPUs") || !strings.Contains(v, "72C") || !strings.Contains(v, "#") {
		t.Fatalf("ascii panel %s", v)
	}
}

// Every width from the minimum to very wide: each line fits exactly,
// and the extra columns appear only with room.
func TestPanelFitsEveryWidth(t *testing.T) {
	devs := threeGPUs()
	devs[2].Host = "b"
	devs[2].Endpoints = []string{"http://10.0.0.7:8000/meta-llama/Llama-3.1-70B-Instruct"}
	m := panel(devs)
	for w := 40; w <= 240; w++ {
		m.SetSize(w, m.Want())
		for _, l := range strings.Split(m.View(), "\n") {
			if got := ansi.StringWidth(l); got > w {
				t.Fatalf("width %d: line of %d cells: %q", w, got, ansi.Strip(l))
			}
		}
		view := ansi.Strip(m.View())
		if w >= 160 != strings.Contains(view, "ENDPOINT") && w >= 160 {
			t.Fatalf("width %d: endpoint column expected", w)
		}
		if w <= 80 && strings.Contains(view, "HOST") {
			t.Fatalf("width %d: no room for hosts", w)
		}
	}
	// Too few lines: the total stays and says which GPUs are drawn.
	m.SetSize(100, 3)
	if v := ansi.Strip(m.View()); !strings.Contains(v, "Σ 3 GPUs (▼2 more)") {
		t.Fatalf("cut panel %q", v)
	}
}

// A cut panel scrolls: every device can be brought on screen, the total
// says which are drawn, and scrolling stops at either end.
func TestPanelScrolls(t *testing.T) {
	var devs []telemetry.GPUDevice
	for i := range 12 {
		devs = append(devs, telemetry.GPUDevice{Key: "h/" + strconv.Itoa(i), Host: "h", Index: strconv.Itoa(i), Name: "GPU-" + strconv.Itoa(i)})
	}
	m := panel(devs)
	m.SetSize(80, 6) // title, 4 devices, total
	if !m.Cut() {
		t.Fatal("12 GPUs in 6 lines must be cut")
	}
	names := func() []string {
		var out []string
		for _, l := range strings.Split(ansi.Strip(m.View()), "\n") {
			if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[1], "GPU-") {
				out = append(out, f[1])
			}
		}
		return out
	}
	seen := map[string]bool{}
	for range 20 {
		for _, n := range names() {
			seen[n] = true
		}
		m.Scroll(1)
	}
	if len(seen) != 12 {
		t.Fatalf("scrolling showed %d of 12 GPUs: %v", len(seen), seen)
	}
	if got := names(); strings.Join(got, " ") != "GPU-8 GPU-9 GPU-10 GPU-11" {
		t.Fatalf("scrolled past the end: %v", got)
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "Σ 12 GPUs (▲8 more)") {
		t.Fatalf("total does not say which are drawn: %q", v)
	}
	m.Scroll(-1)
	if v := ansi.Strip(m.View()); !strings.Contains(v, "Σ 12 GPUs (▲7 ▼1 more)") {
		t.Fatalf("total does not say how many are above and below: %q", v)
	}
	m.Scroll(1)
	m.Page(-1)
	if got := names(); got[0] != "GPU-4" {
		t.Fatalf("page up from the end: %v", got)
	}
	m.Home()
	if got := names(); got[0] != "GPU-0" {
		t.Fatalf("home: %v", got)
	}
	m.End()
	if got := names(); got[3] != "GPU-11" {
		t.Fatalf("end: %v", got)
	}
	m.Focus(true)
	if v := ansi.Strip(m.View()); !strings.HasPrefix(v, "▸GPU") {
		t.Fatalf("focused panel without its mark: %q", v)
	}
}

// The demo's fleet: four GPUs on one host, each serving a model behind
// one host:port. The NAME column is as wide as its longest name, the
// ENDPOINT column says which model each GPU serves at every width (the
// shared host:port goes first where the whole name does not fit), and no
// port is ever cut.
func TestPanelEndpointSaysTheModel(t *testing.T) {
	const gib = 1 << 30
	models := []string{"meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-14B-Instruct", "meta-llama/Llama-3.2-3B-Instruct", "deepseek-ai/DeepSeek-R1-Distill-Llama-8B"}
	names := []string{"NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA L4", "NVIDIA H100 80GB HBM3"}
	var devs []telemetry.GPUDevice
	for i, model := range models {
		devs = append(devs, telemetry.GPUDevice{Key: "h/" + strconv.Itoa(i), Host: "127.0.0.1", Index: strconv.Itoa(i), Name: names[i],
			MemUsedBytes: fp(70 * gib), MemTotalBytes: fp(80 * gib), DRAMActiveRatio: fp(0.65), UtilRatio: fp(1),
			PowerW: fp(500), PowerLimitW: fp(700), TemperatureCelsius: fp(62), Endpoints: []string{"127.0.0.1:39909/" + model}})
	}
	// what tells each model apart from the others
	marks := [][]string{{"3.1", "8B"}, {"Qwen2.5", "14B"}, {"3.2", "3B"}, {"R1", "8B"}}
	m := panel(devs)
	for _, w := range []int{80, 100, 120, 160, 240} {
		m.SetSize(w, m.Want())
		lines := strings.Split(ansi.Strip(m.View()), "\n")
		if !strings.Contains(lines[0], "ENDPOINT") {
			t.Fatalf("width %d: no ENDPOINT column: %q", w, lines[0])
		}
		for i := range models {
			line := lines[1+i]
			for _, mark := range marks[i] {
				if !strings.Contains(line, mark) {
					t.Errorf("width %d: GPU %d line lacks %q: %q", w, i, mark, line)
				}
			}
			if strings.Contains(line, ":399…") || strings.Contains(line, "127.0.0.1:3…") {
				t.Errorf("width %d: port cut: %q", w, line)
			}
			if w >= 160 && !strings.Contains(line, devs[i].Endpoints[0]) {
				t.Errorf("width %d: endpoint not whole: %q", w, line)
			}
		}
		// NAME is as wide as "NVIDIA A100-SXM4-80GB" where there is room:
		// the memory column starts right after it.
		if w >= 120 && !strings.Contains(lines[2], "NVIDIA A100-SXM4-80GB   70.0/80.0GiB") && !strings.Contains(lines[2], "NVIDIA A100-SXM4-80GB 70.0/80.0GiB") {
			t.Errorf("width %d: NAME padded past its longest name: %q", w, lines[2])
		}
	}
}

// The layout is cached, never stale: a device joined to another endpoint
// shows the new one at once.
func TestPanelLayoutFollowsTheDevices(t *testing.T) {
	devs := threeGPUs()
	devs[0].Endpoints = []string{"llama-8b"}
	m := panel(devs)
	m.SetSize(120, m.Want())
	if v := ansi.Strip(m.View()); !strings.Contains(v, "llama-8b") {
		t.Fatalf("first view: %s", v)
	}
	devs = threeGPUs()
	devs[0].Endpoints = []string{"qwen-72b"}
	m.SetDevices(devs)
	if v := ansi.Strip(m.View()); strings.Contains(v, "llama-8b") || !strings.Contains(v, "qwen-72b") {
		t.Fatalf("after the join changed: %s", v)
	}
}
