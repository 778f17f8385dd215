package chart

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	// golden registers -update, so `go test ./tui/... -update` runs here too.
	_ "github.com/charmbracelet/x/exp/golden"

	"github.com/ttftop/ttftop/themes"
)

func monoStyles() *themes.Styles { return themes.NewStyles(themes.Mono()) }

func TestSparkGapsAndScale(t *testing.T) {
	g := themes.NewGlyphs(false)
	nan := math.NaN()
	got := Spark([]float64{0, 50, nan, 100}, 0, false, g.Spark, &monoStyles().Normal)
	if got != "▁▅ █" {
		t.Errorf("spark = %q", got)
	}
	// Within a tenth of its size a series spans part of the height:
	// 50…54 over 49.3…54.7.
	if got = Spark([]float64{50, 52, 54}, 0, false, g.Spark, &monoStyles().Normal); got != "▂▅▇" {
		t.Errorf("steady spark = %q", got)
	}
	// An SLO threshold far above does not squash it.
	if got = Spark([]float64{50, 52, 54}, 200, true, g.Spark, &monoStyles().Normal); got != "▂▅▇" {
		t.Errorf("spark = %q", got)
	}
	if Spark(nil, 0, false, g.Spark, &monoStyles().Normal) != "" {
		t.Error("empty spark")
	}
}

func TestLineNeverPanicsAndStaysInBounds(t *testing.T) {
	st := monoStyles()
	vals := make([]float64, 300)
	for i := range vals {
		vals[i] = 100 + 80*math.Sin(float64(i)/9)
		if i%50 == 7 {
			vals[i] = math.NaN()
		}
	}
	for _, ascii := range []bool{false, true} {
		g := themes.NewGlyphs(ascii)
		for w := -1; w < 40; w++ {
			for h := -1; h < 12; h++ {
				c := Line{Values: vals, Unit: "ms", Threshold: 150, HasThreshold: true, Span: 5 * time.Minute, Width: w, Height: h}
				out := c.Render(g, st)
				for _, row := range strings.Split(out, "\n") {
					if n := ansi.StringWidth(row); n > max(w, 1) {
						t.Fatalf("ascii=%v %dx%d: row %q has %d runes", ascii, w, h, row, n)
					}
				}
				if ascii {
					for _, r := range out {
						if r > 127 {
							t.Fatalf("non-ASCII rune %q in ascii chart", r)
						}
					}
				}
			}
		}
	}
}

func TestLineShowsThresholdAndBreach(t *testing.T) {
	g := themes.NewGlyphs(true)
	vals := []float64{10, 10, 10, 10, 10, 10, 10, 10, 200, 200, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10}
	c := Line{Values: vals, Unit: "ms", Threshold: 100, HasThreshold: true, Span: time.Minute, Width: 7 + 1 + 24, Height: 8}
	out := c.Render(g, monoStyles())
	t.Log("\n" + out)
	if !strings.Contains(out, "100ms") || !strings.Contains(out, "!!") || !strings.Contains(out, "now") {
		t.Errorf("missing threshold label, breach strip or time label:\n%s", out)
	}
}

func TestBars(t *testing.T) {
	g := themes.NewGlyphs(false)
	out := Bars([]Bar{{"≤10ms", 10, "10", false}, {"≤20ms", 5, "5", false}, {">20ms", 0, "0", true}}, 30, g, &monoStyles().Normal)
	t.Log("\n" + out)
	if !strings.Contains(out, "█") {
		t.Errorf("no bars:\n%s", out)
	}
	for w := -2; w < 10; w++ {
		_ = Bars([]Bar{{"a", 1, "1", false}}, w, g, &monoStyles().Normal)
	}
}

// A varying series shows its variation whatever the SLO: 78 ms ± 20 %
// under a 500 ms objective used every level, not one flat row at the
// bottom (the old floor at half the top, stretched to the SLO). A
// threshold within the data's own span is the top of the scale, so the
// headroom shows; a constant series is flat; jitter of a percent stays
// within two levels.
func TestSparkShowsVariation(t *testing.T) {
	g := themes.NewGlyphs(false)
	r := &monoStyles().Normal
	wave := make([]float64, 16)
	for i := range wave {
		wave[i] = 78 * (1 + 0.2*math.Sin(float64(i)*2*math.Pi/16))
	}
	levels := func(s string) (lo, hi rune, distinct int) {
		seen := map[rune]bool{}
		lo, hi = '█', '▁'
		for _, c := range s {
			seen[c] = true
			lo, hi = min(lo, c), max(hi, c)
		}
		return lo, hi, len(seen)
	}
	for _, thr := range []float64{0, 500} {
		got := Spark(wave, thr, thr > 0, g.Spark, r)
		if lo, hi, n := levels(got); lo != '▁' || hi != '█' || n < 6 {
			t.Errorf("threshold %v: varying series drawn %q: want ▁ to █ in 6+ levels", thr, got)
		}
	}
	// The SLO just above: the data stops short of the top.
	if got := Spark([]float64{80, 90, 100}, 110, true, g.Spark, r); got != "▁▃▆" {
		t.Errorf("SLO within reach: %q, want the scale to top out at it", got)
	}
	if got := Spark([]float64{40, 40, 40, 40}, 500, true, g.Spark, r); got != "▅▅▅▅" {
		t.Errorf("constant series: %q, want flat", got)
	}
	jitter := Spark([]float64{100, 100.5, 101, 100.5, 100}, 0, false, g.Spark, r)
	if lo, hi, _ := levels(jitter); hi-lo > 2 {
		t.Errorf("1%% jitter drawn %q: more than two levels apart", jitter)
	}
}

func TestSparkZeroIsNotAGap(t *testing.T) {
	nan := math.NaN()
	for _, ascii := range []bool{false, true} {
		g := themes.NewGlyphs(ascii)
		got := []rune(Spark([]float64{0, nan, 0, 8}, 0, false, g.Spark, &monoStyles().Normal))
		if len(got) != 4 || got[0] != g.Spark[0] || got[1] != ' ' || got[2] != g.Spark[0] || got[3] != g.Spark[len(g.Spark)-1] {
			t.Errorf("ascii=%v: spark = %q: zero must be the lowest level, NaN a space", ascii, string(got))
		}
	}
	// all missing: all gaps, never a baseline
	if got := Spark([]float64{nan, nan}, 0, false, themes.NewGlyphs(false).Spark, &monoStyles().Normal); got != "  " {
		t.Errorf("all-NaN spark = %q", got)
	}
}

func TestSparkBreachPaintedBad(t *testing.T) {
	st := themes.NewStyles(themes.Mono()) // Bad is bold in mono
	got := Spark([]float64{10, 10, 300}, 100, true, themes.NewGlyphs(false).Spark, &st.Normal)
	if !strings.Contains(got, st.Normal.Bad.S("█")) {
		t.Errorf("breach cell not painted bad: %q", got)
	}
}

func TestLineGapIsEmpty(t *testing.T) {
	vals := make([]float64, 40)
	for i := range vals {
		vals[i] = 50
		if i >= 10 && i < 20 {
			vals[i] = math.NaN()
		}
	}
	for _, ascii := range []bool{false, true} {
		g := themes.NewGlyphs(ascii)
		// 7 label + 1 axis + 20 (braille: 2 points a cell) or 40 cells
		pw := 20
		if ascii {
			pw = 40
		}
		c := Line{Values: vals, Unit: "ms", Span: time.Minute, Width: 8 + pw, Height: 6}
		out := strings.Split(ansi.Strip(c.Render(g, monoStyles())), "\n")
		lo, hi := 8+10/(40/pw), 8+20/(40/pw)
		for r, row := range out[:4] {
			cells := []rune(row)
			for x := lo; x < hi; x++ {
				if cells[x] != ' ' {
					t.Fatalf("ascii=%v: row %d col %d = %q inside the gap:\n%s", ascii, r, x, cells[x], strings.Join(out, "\n"))
				}
			}
		}
		if !strings.ContainsAny(out[0]+out[1]+out[2]+out[3], "*⠉⠒⠤⣀") {
			t.Errorf("ascii=%v: no line drawn:\n%s", ascii, strings.Join(out, "\n"))
		}
	}
}

func TestSparkEverySizeAndShape(t *testing.T) {
	nan := math.NaN()
	for _, ascii := range []bool{false, true} {
		g := themes.NewGlyphs(ascii)
		for n := 0; n < 40; n++ {
			for _, fill := range []float64{nan, 0, 5, math.Inf(1)} {
				vals := make([]float64, n)
				for i := range vals {
					vals[i] = fill
					if i%3 == 1 {
						vals[i] = float64(i)
					}
				}
				out := ansi.Strip(Spark(vals, 10, true, g.Spark, &monoStyles().Normal))
				if w := ansi.StringWidth(out); w != n {
					t.Fatalf("ascii=%v n=%d fill=%v: width %d: %q", ascii, n, fill, w, out)
				}
			}
		}
	}
}

// Sparse points are joined; a hole far wider than their spacing is not.
func TestJoinGap(t *testing.T) {
	nan := math.NaN()
	sparse := []float64{1, nan, nan, nan, 2, nan, nan, nan, 3, nan, nan, nan, 2}
	if g := JoinGap(sparse); g != 8 {
		t.Errorf("points every 4: join gap %d, want 8", g)
	}
	if g := JoinGap([]float64{1, 2, 3, nan, nan, nan, nan, nan, nan, 4}); g != 2 {
		t.Errorf("dense points with a hole: join gap %d, want 2 (the hole stays)", g)
	}
	if g := JoinGap([]float64{nan, 1, nan}); g != 1 {
		t.Errorf("one point: %d", g)
	}
}

// A probe every 4 points: the chart draws a line through them (no empty
// cell between two points), where it used to leave isolated dots.
func TestSparseLineIsJoined(t *testing.T) {
	vals := make([]float64, 40)
	for i := range vals {
		vals[i] = math.NaN()
		if i%4 == 0 {
			vals[i] = 50
		}
	}
	g := themes.NewGlyphs(true)
	c := Line{Values: vals, Unit: "ms", Span: time.Minute, Width: 48, Height: 6}
	out := strings.Split(ansi.Strip(c.Render(g, monoStyles())), "\n")
	row := ""
	for _, r := range out[:4] {
		if strings.Contains(r, "*") {
			row = r
		}
	}
	cells := []rune(row)
	for x := 8; x < 8+36; x++ {
		if cells[x] == ' ' {
			t.Fatalf("hole at col %d between sparse points:\n%s", x, strings.Join(out, "\n"))
		}
	}
}
