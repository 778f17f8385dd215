package raceview

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// Options configure the view.
type Options struct {
	Lanes  []Lane
	Title  string // what is raced: the prompt, max tokens
	Again  func() // asks for another round (space); nil: no rematch
	Now    func() time.Time
	Rounds int // rounds per race (--rounds)
	// Over: the race shows over the dashboard, where esc returns (the
	// dashboard handles esc; the view only says it).
	Over bool
}

// Model is the Bubble Tea model of a race.
type Model struct {
	opts          Options
	lanes         []*lane
	width, height int
	round         int
	racing        bool
	roundStart    time.Time
	ended         *Ended
	summary       string
}

// New returns the view before its first round.
func New(opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	m := &Model{opts: opts}
	for _, l := range opts.Lanes {
		ln := &lane{Lane: l}
		ln.reset(1)
		m.lanes = append(m.lanes, ln)
	}
	return m
}

// tick redraws the elapsed times while a round runs.
type tick struct{}

const tickEvery = 100 * time.Millisecond

func tickCmd() tea.Cmd { return tea.Tick(tickEvery, func(time.Time) tea.Msg { return tick{} }) }

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return nil }

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	return m, cmd
}

// update applies msg. The lanes' figures are computed again on the tick
// (10 a second) and when a racer starts or ends, not for every chunk:
// at 300 tok/s a count redrawn per frame cost more bytes over SSH than
// the text itself.
func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		w := m.layout().textWidth
		for _, l := range m.lanes {
			l.box.resize(w)
		}
		m.refreshFigures()
	case Started:
		m.round, m.racing, m.roundStart, m.ended = msg.Round, true, m.opts.Now(), nil
		w := m.layout().textWidth
		for _, l := range m.lanes {
			l.reset(w)
		}
		m.refreshFigures()
		return tickCmd()
	case Chunk:
		if msg.Racer >= 0 && msg.Racer < len(m.lanes) {
			l := m.lanes[msg.Racer]
			first := !l.started
			l.add(msg)
			if first {
				m.refreshFigures() // the TTFT mark, when the token lands
			}
		}
	case Finished:
		if msg.Racer >= 0 && msg.Racer < len(m.lanes) {
			l := m.lanes[msg.Racer]
			l.done = &msg
			if msg.OK {
				// Provisional, by arrival; Ended ranks by the instants.
				l.pos = 1
				for _, o := range m.lanes {
					if o != l && o.done != nil && o.done.OK {
						l.pos++
					}
				}
			}
			m.refreshFigures()
		}
	case Ended:
		m.racing, m.ended = false, &msg
		for i, l := range m.lanes {
			if i < len(msg.Positions) {
				l.pos = msg.Positions[i]
			}
		}
		m.refreshFigures()
	case Summary:
		m.summary = msg.Text
	case tick:
		m.refreshFigures()
		if m.racing {
			return tickCmd()
		}
	case tea.KeyPressMsg:
		switch msg.String() {
		case "q", "ctrl+c", "esc":
			return tea.Quit
		case "space":
			if !m.racing && m.opts.Again != nil {
				m.racing = true // until Started: one rematch per press
				m.opts.Again()
			}
		}
	}
	return nil
}

func (m *Model) refreshFigures() {
	now := m.opts.Now().Sub(m.roundStart)
	for _, l := range m.lanes {
		l.fig = m.figures(l, now)
	}
}

// View implements tea.Model.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	return v
}
