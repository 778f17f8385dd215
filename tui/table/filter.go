package table

import (
	"strings"
	"unicode"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Filter is the `/` input: a bubbles textinput (cursor movement, word
// delete, bracketed paste) with a steady cursor, so typing costs no blink
// ticks, and no ctrl+v clipboard read (bracketed paste covers pasting, and
// a clipboard is of no use over SSH).
type Filter struct {
	in    textinput.Model
	ready bool // in is set up (the zero Filter is ready to use)
}

// maxFilter caps the filter length: it is matched against every row.
const maxFilter = 64

func (f *Filter) input() *textinput.Model {
	if !f.ready {
		in := textinput.New()
		in.Prompt = ""
		in.CharLimit = maxFilter
		in.KeyMap.Paste = key.NewBinding(key.WithDisabled())
		// tab leaves the input (Key), it does not complete
		in.KeyMap.AcceptSuggestion = key.NewBinding(key.WithDisabled())
		s := in.Styles()
		s.Cursor.Blink = false
		in.SetStyles(s)
		f.in, f.ready = in, true
	}
	return &f.in
}

// SetStyles sets the text and cursor colours (theme change).
func (f *Filter) SetStyles(text lipgloss.Style) {
	in := f.input()
	s := in.Styles()
	s.Focused.Text, s.Blurred.Text = text, text
	s.Focused.Prompt, s.Blurred.Prompt = text, text // prompt is "" (the footer draws " / ")
	s.Cursor.Color = text.GetForeground()
	s.Cursor.Blink = false
	in.SetStyles(s)
}

// Value is the current filter text.
func (f *Filter) Value() string {
	return f.in.Value()
}

// Editing reports whether keys go to the filter.
func (f *Filter) Editing() bool { return f.ready && f.in.Focused() }

// Start begins editing, the cursor at the end.
func (f *Filter) Start() {
	in := f.input()
	in.Focus() // no blink: returns no command
	in.CursorEnd()
}

// Clear empties the filter and stops editing.
func (f *Filter) Clear() {
	if f.ready {
		f.in.Reset()
		f.in.Blur()
	}
}

// Active reports whether a filter applies.
func (f *Filter) Active() bool { return f.Value() != "" }

// Key handles a key while editing; it reports whether the value changed.
func (f *Filter) Key(k tea.KeyPressMsg) (changed bool) {
	in := f.input()
	switch k.String() {
	case "enter", "tab":
		in.Blur()
		return false
	case "esc":
		f.Clear()
		return true
	}
	return f.update(k)
}

// Paste inserts pasted text at the cursor (printable runes only).
func (f *Filter) Paste(s string) {
	f.update(tea.PasteMsg{Content: s})
}

func (f *Filter) update(msg tea.Msg) bool {
	in := f.input()
	before := in.Value()
	*in, _ = in.Update(msg) // steady cursor, paste key off: no command
	if v := in.Value(); !printable(v) {
		// textinput drops control characters only; a format or bidi rune
		// must not reach the screen through the echo either.
		pos := in.Position()
		in.SetValue(strings.Map(func(r rune) rune {
			if unicode.IsPrint(r) {
				return r
			}
			return -1
		}, v))
		in.SetCursor(min(pos, len([]rune(in.Value()))))
	}
	return in.Value() != before
}

func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// View renders the input (value and cursor) at most width cells wide,
// scrolling horizontally to keep the cursor in view.
func (f *Filter) View(width int) string {
	in := f.input()
	// One cell is the cursor after the text; no padding when it fits.
	in.SetWidth(min(ansi.StringWidth(in.Value()), max(width-1, 1)))
	in.SetCursor(in.Position()) // re-derive the visible part for this width
	return in.View()
}
