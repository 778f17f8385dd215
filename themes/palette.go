package themes

// The variants, in one place (glow keeps its adaptive colours in one
// styles file). Colours are xterm-256 indices first: OpenSSH does not
// forward COLORTERM, so most SSH sessions get the 256-colour profile and a
// palette designed in truecolor would be downsampled unpredictably.
// 0 means "terminal default" (no colour set).

// dark: for dark backgrounds; state colours keep ≥ 4.5:1 contrast on
// black and text words carry every state anyway.
func dark() palette {
	return palette{
		Text: 252, Faint: 244, Accent: 75, Border: 240, Title: 117,
		SelectedFg: 231, SelectedBg: 238,
		OK: 114, Warn: 214, Bad: 203, Stale: 244, NoData: 180,
		Line: 117, Line2: 180, Threshold: 203, BreachBg: 52,
	}
}

// light: the same roles darkened for white backgrounds (the bottom/nvitop
// complaint: a dark-only palette is unreadable on light terminals).
func light() palette {
	return palette{
		Text: 235, Faint: 242, Accent: 25, Border: 248, Title: 24,
		SelectedFg: 16, SelectedBg: 253,
		OK: 28, Warn: 130, Bad: 160, Stale: 242, NoData: 94,
		Line: 25, Line2: 94, Threshold: 160, BreachBg: 224,
	}
}

// highContrast: terminal-default text, bold pure colours, reverse video
// for the selection so it works on any background.
func highContrast() palette {
	return palette{
		Text: 0, Faint: 250, Accent: 51, Border: 0, Title: 51,
		SelectedReverse: true, Bold: true,
		OK: 46, Warn: 226, Bad: 196, Stale: 250, NoData: 213,
		Line: 51, Line2: 226, Threshold: 196, BreachBg: 88,
	}
}

// okabeIto: the Okabe–Ito colour-blind-safe set mapped to the nearest
// xterm-256 entries: sky blue #56B4E9→74 (OK: never green/red alone),
// orange #E69F00→214 (pending), vermillion #D55E00→166 (breach/error),
// bluish green #009E73→36 and yellow #F0E442→221 for chart lines.
func okabeIto() palette {
	return palette{
		Text: 252, Faint: 244, Accent: 74, Border: 240, Title: 74,
		SelectedFg: 231, SelectedBg: 238,
		OK: 74, Warn: 214, Bad: 166, Stale: 244, NoData: 221,
		Line: 36, Line2: 221, Threshold: 166, BreachBg: 94,
	}
}

// mono: no colour at all (NO_COLOR, --theme mono); states are told by
// words and by bold/faint/reverse/underline attributes.
func mono() palette { return palette{Mono: true, SelectedReverse: true, Bold: true} }
