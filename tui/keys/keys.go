// Package keys is ttftop's key map. Help screens are generated from it
// (bubbles/help), so a binding and its help text cannot drift apart.
package keys

import "charm.land/bubbles/v2/key"

// Map holds every binding. It implements help.KeyMap.
type Map struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Enter, Back, Tab                        key.Binding
	Filter, Sort, SortReverse               key.Binding
	Freeze, WindowUp, WindowDown            key.Binding
	Faster, Slower                          key.Binding
	Theme, Redraw, Help, Quit               key.Binding
	// Side switches the latency columns between the client's figures
	// (ttftop's probes) and the engine's own (scrape, PromQL).
	Side key.Binding
	// Expand lists or hides a model's replicas and LoRA adapters under its row.
	Expand key.Binding
	// Problems opens the full messages of failing sources and figures;
	// Mouse turns mouse capture off and on, so they can be copied.
	Problems, Mouse key.Binding
	// GPUs shows or hides the per-GPU panel.
	GPUs key.Binding
	// Race races the endpoints the table shows; disabled (not matched,
	// not in help) unless the map comes from WithRace.
	Race key.Binding
	// Replay controls: disabled (not matched, not in help) unless the
	// map comes from WithReplay.
	Pause, SeekBack, SeekFwd, SeekBackLong, SeekFwdLong key.Binding
	Speed1, Speed10, SpeedMax                           key.Binding
}

// New returns the default bindings; ascii spells arrows as words so help
// renders on terminals without those glyphs.
func New(ascii bool) Map {
	up, down, left, right := "↑/k", "↓/j", "←", "→"
	if ascii {
		up, down, left, right = "up/k", "down/j", "left", "right"
	}
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	off := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc), key.WithDisabled())
	}
	return Map{
		Up:          b([]string{"up", "k"}, up, "up"),
		Down:        b([]string{"down", "j"}, down, "down"),
		PageUp:      b([]string{"pgup", "ctrl+b"}, "pgup", "page up"),
		PageDown:    b([]string{"pgdown", "ctrl+f", "space"}, "pgdn", "page down"),
		Top:         b([]string{"home", "g"}, "g/home", "first"),
		Bottom:      b([]string{"end", "G"}, "G/end", "last"),
		Enter:       b([]string{"enter"}, "enter", "details and why"),
		Back:        b([]string{"esc"}, "esc", "back / clear filter"),
		Tab:         b([]string{"tab", "shift+tab"}, "tab", "next pane"),
		Filter:      b([]string{"/"}, "/", "filter"),
		Sort:        b([]string{"s"}, "s", "sort column"),
		SortReverse: b([]string{"S", "shift+s"}, "S", "reverse sort"),
		Freeze:      b([]string{"p", "f"}, "p", "freeze"),
		WindowUp:    b([]string{"+", "="}, "+", "longer window"),
		WindowDown:  b([]string{"-", "_"}, "-", "shorter window"),
		Faster:      b([]string{"["}, "[", "refresh faster"),
		Slower:      b([]string{"]"}, "]", "refresh slower"),
		Theme:       b([]string{"t"}, "t", "next theme"),
		Side:        b([]string{"v"}, "v", "client/server figures"),
		Expand:      b([]string{"x"}, "x", "replicas/LoRA: expand/fold"),
		Problems:    b([]string{"e"}, "e", "errors and why in full"),
		Mouse:       b([]string{"m"}, "m", "mouse capture on/off"),
		GPUs:        b([]string{"u"}, "u", "GPU panel on/off"),
		Redraw:      b([]string{"r", "ctrl+l"}, "r", "redraw"),
		Race:        off([]string{"R", "shift+r"}, "R", "race the shown endpoints"),
		Help:        b([]string{"?"}, "?", "help"),
		Quit:        b([]string{"q", "ctrl+c"}, "q", "quit"),

		Pause:        off([]string{"space"}, "space", "pause/resume replay"),
		SeekBack:     off([]string{"left"}, left, "back 30s"),
		SeekFwd:      off([]string{"right"}, right, "forward 30s"),
		SeekBackLong: off([]string{"shift+left", "<"}, "<", "back 5m (shift+"+left+")"),
		SeekFwdLong:  off([]string{"shift+right", ">"}, ">", "forward 5m (shift+"+right+")"),
		Speed1:       off([]string{"1"}, "1", "replay at 1×"),
		Speed10:      off([]string{"2"}, "2", "replay at 10×"),
		SpeedMax:     off([]string{"3"}, "3", "replay at max speed"),
	}
}

// WithReplay enables the replay controls; space then pauses the replay
// instead of paging down.
func (m Map) WithReplay() Map {
	for _, b := range []*key.Binding{&m.Pause, &m.SeekBack, &m.SeekFwd, &m.SeekBackLong, &m.SeekFwdLong,
		&m.Speed1, &m.Speed10, &m.SpeedMax} {
		b.SetEnabled(true)
	}
	m.PageDown.SetKeys("pgdown", "ctrl+f")
	return m
}

// WithRace enables the race key (a dashboard given a way to race).
func (m Map) WithRace() Map {
	m.Race.SetEnabled(true)
	return m
}

// Replay reports whether the replay controls are on.
func (m Map) Replay() bool { return m.Pause.Enabled() }

// ShortHelp is the footer line.
func (m Map) ShortHelp() []key.Binding {
	return []key.Binding{m.Help, m.Pause, m.SeekBack, m.SeekFwd, m.Enter, m.Problems, m.Filter, m.Sort, m.Freeze,
		m.WindowUp, m.WindowDown, m.Tab, m.Quit}
}

// FullHelp is the help screen, one column per group.
func (m Map) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{m.Up, m.Down, m.PageUp, m.PageDown, m.Top, m.Bottom},
		{m.Enter, m.Back, m.Tab, m.Filter, m.Sort, m.SortReverse, m.Side, m.Expand, m.Race},
		{m.Freeze, m.WindowUp, m.WindowDown, m.Faster, m.Slower},
		{m.Problems, m.Mouse, m.GPUs, m.Theme, m.Redraw, m.Help, m.Quit},
		{m.Pause, m.SeekBack, m.SeekFwd, m.SeekBackLong, m.SeekFwdLong, m.Speed1, m.Speed10, m.SpeedMax},
	}
}
