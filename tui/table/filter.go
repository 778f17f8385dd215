package table

import (
	"unicode"

	tea "charm.land/bubbletea/v2"
)

// Filter is the `/` input. bubbles/textinput would pull atotto/clipboard
// into go.mod (not allowed here), and a filter needs only typing, backspace
// and clear; the cursor does not blink, so typing costs no render ticks.
type Filter struct {
	value   []rune
	editing bool
}

// Value is the current filter text.
func (f *Filter) Value() string { return string(f.value) }

// Editing reports whether keys go to the filter.
func (f *Filter) Editing() bool { return f.editing }

// Start begins editing.
func (f *Filter) Start() { f.editing = true }

// Clear empties the filter and stops editing.
func (f *Filter) Clear() { f.value, f.editing = nil, false }

// Active reports whether a filter applies.
func (f *Filter) Active() bool { return len(f.value) > 0 }

// maxFilter caps the filter length: it is matched against every row.
const maxFilter = 64

// Key handles a key while editing; it reports whether the value changed.
func (f *Filter) Key(k tea.KeyPressMsg) (changed bool) {
	switch k.String() {
	case "enter", "tab":
		f.editing = false
		return false
	case "esc":
		f.Clear()
		return true
	case "backspace", "ctrl+h":
		if len(f.value) > 0 {
			f.value = f.value[:len(f.value)-1]
			return true
		}
		return false
	case "ctrl+u":
		f.value = nil
		return true
	case "ctrl+w":
		i := len(f.value)
		for i > 0 && f.value[i-1] == ' ' {
			i--
		}
		for i > 0 && f.value[i-1] != ' ' {
			i--
		}
		f.value = f.value[:i]
		return true
	}
	if k.Text == "" || k.Mod&^tea.ModShift != 0 {
		return false
	}
	for _, r := range k.Text {
		// Printable runes only: a pasted escape sequence must not reach
		// the screen through the echo of the filter.
		if unicode.IsPrint(r) && len(f.value) < maxFilter {
			f.value = append(f.value, r)
		}
	}
	return true
}

// Paste appends pasted text (printable runes only).
func (f *Filter) Paste(s string) {
	for _, r := range s {
		if unicode.IsPrint(r) && len(f.value) < maxFilter {
			f.value = append(f.value, r)
		}
	}
}
