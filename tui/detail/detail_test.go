package detail

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	"math"
	"testing"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
)

var t0 = time.Date(2026, 3, 1, 12, 5, 0, 0, time.UTC)

func ctxFor(theme string, now time.Time) *common.Context {
	th, err := themes.Lookup(theme)
	if err != nil {
		panic(err)
	}
	return &common.Context{Styles: themes.NewStyles(th), Glyphs: themes.NewGlyphs(false), Now: now,
		Window: 5 * time.Minute, Refresh: time.Second}
}

type input struct {
	ep   telemetry.EndpointSnapshot
	data Data
	w, h int
}

func f(v float64) *float64 { return &v }

func baseInput() input {
	ep := telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: "ep", Model: "m", Engine: telemetry.EngineVLLM},
		Signals: map[telemetry.Signal]telemetry.SignalSnapshot{
			telemetry.TTFT:     {Unit: "ms", P50: f(40), P90: f(50), P99: f(60), Count: 10, State: telemetry.Live, ObservedAt: t0},
			telemetry.GPUMemBW: {Unit: "%", Value: f(61), State: telemetry.Live, ObservedAt: t0},
			telemetry.KVCache:  {Unit: "%", Value: f(45), State: telemetry.Stale, ObservedAt: t0.Add(-20 * time.Second)},
		}}
	series := func(n int, base float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = base + 10*math.Sin(float64(i)/3)
		}
		return v
	}
	d := Data{Endpoint: "ep", At: t0, Window: 5 * time.Minute, TTFT: series(150, 50), TPOT: series(150, 20),
		TTFTThr: 500, HasTTFTThr: true, DRAM: series(SparkPoints, 60), MBU: series(SparkPoints, 50),
		ITL: []telemetry.Bucket{{UpperBound: 0.01, Count: 5}, {UpperBound: 0.02, Count: 9}, {UpperBound: math.Inf(1), Count: 10}},
		Probes: []telemetry.ProbeAt{{At: t0.Add(-10 * time.Second), ProbeRecord: telemetry.ProbeRecord{OK: true, Status: 200,
			TTFTms: 41, TPOTms: 12, E2Ems: 1500, OutputTokens: 128, TokensPerEvent: []int{1, 1, 2}}}},
		Live: telemetry.LiveText{Text: "hello world", Tokens: 2, TPS: 20}, LiveAt: t0}
	return input{ep: ep, data: d, w: 160, h: 48}
}

func show(m *Model, in input) string {
	m.SetSize(in.w, in.h)
	m.SetEndpoint(in.ep, true, slo.BadgeOK)
	m.SetData(in.data)
	return m.View()
}

func fresh(ctx *common.Context, in input) string {
	m := New(ctx)
	m.Open("ep")
	return show(&m, in)
}

// Every cached section must be drawn again when what it shows changes: a
// model that saw the old input renders exactly as a fresh one.
func TestCacheNeverStale(t *testing.T) {
	for name, change := range map[string]func(*input, *common.Context){
		"ttft points":   func(in *input, _ *common.Context) { in.data.TTFT[75] = 90 },
		"tpot nan":      func(in *input, _ *common.Context) { in.data.TPOT[3] = math.NaN() },
		"threshold":     func(in *input, _ *common.Context) { in.data.TTFTThr = 55 },
		"itl":           func(in *input, _ *common.Context) { in.data.ITL[1].Count = 7 },
		"itl threshold": func(in *input, _ *common.Context) { in.data.ITLThr, in.data.HasITLThr = 10, true },
		"tokens/event":  func(in *input, _ *common.Context) { in.data.Probes[0].TokensPerEvent = []int{4, 4} },
		"breakdown": func(in *input, _ *common.Context) {
			in.data.Probes[0].Breakdown = []telemetry.ProbePart{{Part: "headers", MS: 3, Source: "client"}}
		},
		"probe": func(in *input, _ *common.Context) { in.data.Probes[0].TTFTms = 99 },
		"new probe": func(in *input, _ *common.Context) {
			in.data.Probes = append(in.data.Probes, telemetry.ProbeAt{At: t0, ProbeRecord: telemetry.ProbeRecord{OK: false, ErrorKind: "timeout"}})
		},
		"gpu value": func(in *input, _ *common.Context) {
			in.ep.Signals[telemetry.GPUMemBW] = telemetry.SignalSnapshot{Unit: "%", Value: f(70), State: telemetry.Live}
		},
		"gpu trend": func(in *input, _ *common.Context) { in.data.DRAM[0] = 0 },
		"stale age": func(_ *input, c *common.Context) { c.Now = c.Now.Add(3 * time.Second) },
		// The ITL heading's "(14s of data)": the panels' old hand-listed
		// key left the endpoint's ITL coverage out, so it stayed blank.
		"itl coverage": func(in *input, _ *common.Context) {
			in.ep.Signals[telemetry.ITL] = telemetry.SignalSnapshot{Unit: "ms", State: telemetry.Live, DataSince: t0.Add(-14 * time.Second)}
		},
		"window": func(_ *input, c *common.Context) { c.Window = time.Hour },
		"theme":  func(_ *input, c *common.Context) { c.Styles = ctxFor("light", t0).Styles },
		"width":  func(in *input, _ *common.Context) { in.w = 100 },
		"height": func(in *input, _ *common.Context) { in.h = 30 },
		"narrow": func(in *input, _ *common.Context) { in.w = 70 },
		"live":   func(in *input, _ *common.Context) { in.data.Live.Text += " again" },
		"ttft stale": func(in *input, _ *common.Context) {
			s := in.ep.Signals[telemetry.TTFT]
			s.State = telemetry.Stale
			in.ep.Signals[telemetry.TTFT] = s
		},
		"nothing new": func(*input, *common.Context) {},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := ctxFor("dark", t0)
			in := baseInput()
			m := New(ctx)
			m.Open("ep")
			show(&m, in)
			in = baseInput() // fresh slices: the model must not keep ours
			change(&in, ctx)
			if name == "theme" {
				m.Invalidate() // what the root does on a theme change
			}
			got := show(&m, in)
			if want := fresh(ctx, in); got != want {
				t.Fatalf("cached view differs from a fresh render\ngot:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// A live-text update draws only the live pane.
func TestLiveUpdateDrawsOnlyLive(t *testing.T) {
	ctx := ctxFor("dark", t0)
	m := New(ctx)
	m.Open("ep")
	in := baseInput()
	show(&m, in)
	c, p, pr := m.charts.Renders(), m.panels.Renders(), m.probesTxt.Renders()
	for i := range 5 {
		l := in.data.Live
		l.Text += " more"
		l.Tokens += i + 1
		if !m.SetLive("ep", l, t0) {
			t.Fatal("live change not taken")
		}
		in.data.Live = l
		got := m.View()
		if want := fresh(ctx, in); got != want {
			t.Fatalf("live update differs from a fresh render\ngot:\n%s\nwant:\n%s", got, want)
		}
	}
	// A refresh with the same figures draws nothing again either.
	show(&m, in)
	if m.charts.Renders() != c || m.panels.Renders() != p || m.probesTxt.Renders() != pr {
		t.Fatalf("sections drawn again: charts %d→%d panels %d→%d probes %d→%d",
			c, m.charts.Renders(), p, m.panels.Renders(), pr, m.probesTxt.Renders())
	}
}

// The title always ends with the SLO state, however narrow: the URL is
// shortened or dropped and the name cut before the state word goes.
func TestTitleKeepsSLOState(t *testing.T) {
	ctx := ctxFor("mono", t0)
	m := New(ctx)
	m.Open("127.0.0.1:40677/meta-llama/Llama-3.1-8B-Instruct")
	m.SetEndpoint(telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: "127.0.0.1:40677/meta-llama/Llama-3.1-8B-Instruct",
		Model: "meta-llama/Llama-3.1-8B-Instruct", Engine: telemetry.EngineVLLM, BaseURL: "http://127.0.0.1:40677"}}, true, slo.BadgeBreach)
	for _, w := range []int{30, 60, 80, 100, 160} {
		got := ansi.Strip(m.title(w))
		if !strings.HasSuffix(got, "SLO "+string(slo.BadgeBreach)) {
			t.Errorf("width %d: SLO state lost: %q", w, got)
		}
		if cells := ansi.StringWidth(got); cells > w {
			t.Errorf("width %d: %d cells: %q", w, cells, got)
		}
	}
	if got := ansi.Strip(m.title(160)); !strings.Contains(got, "http://127.0.0.1:40677") || !strings.Contains(got, "vllm") {
		t.Errorf("wide title lost its URL or engine: %q", got)
	}
}

// A restarted endpoint's title says so, whole where there is room, as
// RESTARTED where there is less, never at the cost of the SLO state.
func TestTitleSaysRestarted(t *testing.T) {
	ctx := ctxFor("mono", t0)
	m := New(ctx)
	name := "10.0.0.1:8000/meta-llama/Llama-3.1-8B-Instruct"
	m.Open(name)
	m.SetEndpoint(telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: name, Model: "meta-llama/Llama-3.1-8B-Instruct",
		Labels: map[string]string{telemetry.LabelRestarted: telemetry.RestartedLabel(t0.Add(-90*time.Second), "counter reset")}}}, true, slo.BadgeOK)
	if got := ansi.Strip(m.title(160)); !strings.Contains(got, "RESTARTED 1m ago (counter reset): rates started afresh") {
		t.Errorf("wide title %q: want the restart said whole", got)
	}
	if got := ansi.Strip(m.title(60)); !strings.Contains(got, "RESTARTED  SLO") {
		t.Errorf("60-cell title %q: want the RESTARTED mark", got)
	}
	for _, w := range []int{30, 60, 100, 160} {
		if got := ansi.Strip(m.title(w)); !strings.HasSuffix(got, "SLO "+string(slo.BadgeOK)) || ansi.StringWidth(got) > w {
			t.Errorf("width %d: %q: want the SLO state kept, within the width", w, got)
		}
	}
}

// Chart and ITL headings are never cut mid-word (QA at 120 columns: "SLO
// 5s far above t", "ITL distribution over 1m (14s of data"; here at 100:
// "no data    TPOT"): the coverage goes first, then the note (unless it
// is a state), each whole or not at all.
func TestHeadingsNotCutMidWord(t *testing.T) {
	for _, w := range []int{80, 100, 120, 160} {
		in := baseInput()
		in.w = w
		for _, sig := range []telemetry.Signal{telemetry.TTFT, telemetry.ITL} {
			s := in.ep.Signals[sig]
			s.State, s.ObservedAt, s.DataSince, s.Unit = telemetry.Live, t0, t0.Add(-14*time.Second), "ms"
			in.ep.Signals[sig] = s
		}
		m := New(ctxFor("mono", t0))
		for _, l := range strings.Split(ansi.Strip(show(&m, in)), "\n") {
			if !strings.Contains(l, "mean per") && !strings.Contains(l, "ITL distribution") {
				continue
			}
			if strings.Count(l, "(") != strings.Count(l, ")") || strings.Contains(l, "…") ||
				strings.Count(l, "no data") != strings.Count(l, "no data in window") {
				t.Errorf("width %d: heading cut: %q", w, l)
			}
		}
	}
}
