package themes

import (
	"strings"
	"testing"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestLookupAliasesAndErrors(t *testing.T) {
	for in, want := range map[string]string{"": "dark", "Light": "light", "colorblind": "okabe-ito",
		"monochrome": "mono", "hc": "high-contrast"} {
		th, err := Lookup(in)
		if err != nil || th.Name != want {
			t.Errorf("Lookup(%q) = %v, %v; want %s", in, th.Name, err, want)
		}
	}
	if _, err := Lookup("solarized"); err == nil || !strings.Contains(err.Error(), "okabe-ito") {
		t.Errorf("unknown theme error must list the names: %v", err)
	}
}

func TestNoColorForcesMono(t *testing.T) {
	for _, v := range []string{"1", "yes", "true", "anything"} {
		th, err := Resolve("dark", env(map[string]string{"NO_COLOR": v}))
		if err != nil || !th.Mono() {
			t.Errorf("NO_COLOR=%q: got %s", v, th.Name)
		}
	}
	if th, _ := Resolve("light", env(nil)); th.Name != "light" {
		t.Errorf("without NO_COLOR: %s", th.Name)
	}
	if th, err := Resolve("nope", env(nil)); err == nil || th.Name != "dark" {
		t.Errorf("unknown falls back to dark with an error: %s %v", th.Name, err)
	}
}

func TestMonoHasNoColourButStillMarksStates(t *testing.T) {
	s := NewStyles(Mono())
	for _, p := range []Paint{s.Normal.Bad, s.Normal.Warn, s.Normal.Stale, s.Selected.Text} {
		out := p.S("x")
		if strings.Contains(out, "38;5") || strings.Contains(out, "48;5") {
			t.Errorf("mono paint has a colour: %q", out)
		}
		if out == "x" {
			t.Error("mono state paints must still use an attribute")
		}
	}
}

func TestPalettesUse256Colours(t *testing.T) {
	for _, n := range Names() {
		th, err := Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		out := NewStyles(th).Normal.Bad.S("x")
		if !th.Mono() && !strings.Contains(out, "38;5;") {
			t.Errorf("%s: bad paint %q is not an xterm-256 colour", n, out)
		}
	}
}

func TestNextCycles(t *testing.T) {
	th := Default()
	var seen []string
	for range Names() {
		th = Next(th)
		seen = append(seen, th.Name)
	}
	if strings.Join(seen, ",") != "light,high-contrast,okabe-ito,mono,dark" {
		t.Errorf("cycle: %v", seen)
	}
}

func TestASCIIGlyphsAreASCII(t *testing.T) {
	g := NewGlyphs(true)
	all := string(g.Spark) + g.Unknown + g.Ellipsis + g.Sel + g.Up + g.Down + g.OKMark + g.BadMark +
		g.StaleMark + g.HLine + g.VLine + g.Corner + g.Bar + g.HalfBar + g.Point + g.ThreshLine +
		g.BreachMark + g.Dot + g.Border.Top + g.Border.Left + g.Border.TopLeft
	for _, r := range all {
		if r > 127 {
			t.Errorf("non-ASCII glyph %q", r)
		}
	}
}
