// Package themes holds ttftop's colour palettes and the styles built from
// them: dark, light, high-contrast, colour-blind safe (Okabe–Ito) and
// monochrome. Styling only ever comes from here; text shown is plain.
package themes

import (
	"fmt"
	"strings"
)

// palette is one variant: xterm-256 indices per semantic role, 0 = terminal
// default.
type palette struct {
	Text, Faint, Accent, Border, Title uint8
	SelectedFg, SelectedBg             uint8
	OK, Warn, Bad, Stale, NoData       uint8
	Line, Line2, Threshold, BreachBg   uint8
	// SelectedReverse draws the selection in reverse video instead of
	// colours; Bold adds weight to states; Mono disables every colour.
	SelectedReverse, Bold, Mono bool
}

// Theme is a named palette (gh-dash style: semantic roles, not raw
// colours). Build its styles once with NewStyles.
type Theme struct {
	Name string
	p    palette
}

// Mono reports whether the theme uses no colour at all.
func (t Theme) Mono() bool { return t.p.Mono }

// DefaultName is the theme used when none is chosen.
const DefaultName = "dark"

// Names lists the themes in cycling order.
func Names() []string {
	return []string{"dark", "light", "high-contrast", "okabe-ito", "mono"}
}

// canonical maps accepted spellings to a theme name.
func canonical(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "", "default":
		return DefaultName
	case "hc", "highcontrast":
		return "high-contrast"
	case "colorblind", "colourblind", "cb", "okabeito":
		return "okabe-ito"
	case "monochrome", "none", "nocolor", "no-color":
		return "mono"
	}
	return n
}

func paletteOf(name string) (palette, bool) {
	switch name {
	case "dark":
		return dark(), true
	case "light":
		return light(), true
	case "high-contrast":
		return highContrast(), true
	case "okabe-ito":
		return okabeIto(), true
	case "mono":
		return mono(), true
	}
	return palette{}, false
}

// Lookup returns the theme called name (case-insensitive; aliases such as
// "colorblind" and "monochrome" accepted).
func Lookup(name string) (Theme, error) {
	n := canonical(name)
	p, ok := paletteOf(n)
	if !ok {
		return Theme{}, fmt.Errorf("unknown theme %q (want one of %s)", name, strings.Join(Names(), ", "))
	}
	return Theme{Name: n, p: p}, nil
}

// Default is the dark theme.
func Default() Theme { return Theme{Name: DefaultName, p: dark()} }

// Mono is the colourless theme.
func Mono() Theme { return Theme{Name: "mono", p: mono()} }

// NoColor reports whether the environment asks for no colour: no-color.org
// says any non-empty NO_COLOR counts (colorprofile parses it with
// strconv.ParseBool, so NO_COLOR=yes would slip through there).
func NoColor(getenv func(string) string) bool {
	return getenv != nil && getenv("NO_COLOR") != ""
}

// Resolve picks the theme for name under the environment getenv: NO_COLOR
// forces monochrome whatever was asked. An unknown name falls back to dark
// and its error is returned for the caller to report.
func Resolve(name string, getenv func(string) string) (Theme, error) {
	if NoColor(getenv) {
		return Mono(), nil
	}
	t, err := Lookup(name)
	if err != nil {
		return Default(), err
	}
	return t, nil
}

// Next returns the theme after t in Names order, wrapping around.
func Next(t Theme) Theme {
	names := Names()
	for i, n := range names {
		if n == t.Name {
			p, _ := paletteOf(names[(i+1)%len(names)])
			return Theme{Name: names[(i+1)%len(names)], p: p}
		}
	}
	return Default()
}
