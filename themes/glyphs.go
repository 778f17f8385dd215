package themes

import "charm.land/lipgloss/v2"

// Glyphs are the non-letter characters the UI draws. ASCII mode (--ascii)
// swaps every one for plain ASCII: braille and block fonts are missing
// from many terminals (btop #580, #971) and some SSH clients mangle them.
type Glyphs struct {
	ASCII bool
	// Spark are the sparkline levels, lowest first; a gap is a space.
	Spark []rune
	// Unknown is shown for a never-observed figure ("—").
	Unknown string
	// Ellipsis marks cut text.
	Ellipsis string
	// Sel marks the selected row; Up/Down the sort direction.
	Sel, Up, Down string
	// OKMark, BadMark, StaleMark precede source states in the header.
	OKMark, BadMark, StaleMark string
	// More precedes the count of sources a cut header line leaves out
	// ("+3 more"); in ASCII a word, as + marks a rate that reads low.
	More string
	// HLine, VLine draw rules; Axis corner for charts.
	HLine, VLine, Corner string
	// Bar and HalfBar fill histogram bars; Point plots ASCII charts.
	Bar, HalfBar string
	Point        string
	// ThreshLine draws an SLO threshold; BreachMark the breach strip.
	ThreshLine, BreachMark string
	// Border is the pane border.
	Border lipgloss.Border
	// Dot separates header items.
	Dot string
}

// NewGlyphs returns the Unicode set, or the ASCII one.
func NewGlyphs(ascii bool) Glyphs {
	if ascii {
		return Glyphs{
			ASCII: true, Spark: []rune("_.-~=+*#"), Unknown: "-", Ellipsis: ".",
			Sel: ">", Up: "^", Down: "v", OKMark: "o", BadMark: "x", StaleMark: "~", More: "and ",
			HLine: "-", VLine: "|", Corner: "+", Bar: "#", HalfBar: "=", Point: "*",
			ThreshLine: "-", BreachMark: "!", Border: lipgloss.ASCIIBorder(), Dot: "|",
		}
	}
	return Glyphs{
		Spark: []rune("▁▂▃▄▅▆▇█"), Unknown: "—", Ellipsis: "…",
		Sel: "▸", Up: "▲", Down: "▼", OKMark: "●", BadMark: "✖", StaleMark: "◌", More: "+",
		HLine: "─", VLine: "│", Corner: "└", Bar: "█", HalfBar: "▌", Point: "•",
		ThreshLine: "╌", BreachMark: "▲", Border: lipgloss.RoundedBorder(), Dot: "·",
	}
}
