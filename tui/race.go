package tui

import (
	"context"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/tui/raceview"
)

// The race key (R) races the endpoints the table shows — the selected
// one first, then the others the filter lets through — in the race view
// (tui/raceview), over the dashboard until esc. The tui knows nothing of
// probes: Options.Racer, given by the command, says which endpoints can
// race and runs the rounds.

// Racer prepares races of the dashboard's endpoints.
type Racer interface {
	// Prepare readies a race of the endpoints among names (in that order)
	// that can race. notes say, one line each, what is left out and why
	// (not probed, beyond the racers a screen can show); err says why
	// there is no race (fewer than two can race).
	Prepare(names []string) (r Race, notes []string, err error)
}

// Race is a prepared race; Run is called once per round, never two at
// once, and Close once, after the last Run returned.
type Race interface {
	Lanes() []raceview.Lane
	Title() string
	// Run races one round: it sends each raceview.Chunk and
	// raceview.Finished to send as it happens and returns the round's
	// end (its Round field is the caller's to set). It returns early
	// when ctx ends.
	Run(ctx context.Context, send func(tea.Msg)) raceview.Ended
	// Close releases the race (its connections; a recording of it is
	// completed); the error is said in the header.
	Close() error
}

// raceMsg carries one of the race view's messages, tagged with the race
// it belongs to (a closed race's late messages are dropped).
type raceMsg struct {
	id  int
	msg tea.Msg
}

// raceState is the open race.
type raceState struct {
	id      int
	view    *raceview.Model
	race    Race
	ctx     context.Context
	cancel  context.CancelFunc
	msgs    chan tea.Msg
	round   int
	running bool           // a round's Run has not returned its end yet
	again   bool           // space was pressed: another round once this one ends
	rounds  sync.WaitGroup // the Run in progress, waited for before Close
}

// raceBuffer is how many chunks may wait for the view before a racer's
// reading waits for the view (two racers at 300 tok/s fill it in 1.7 s).
const raceBuffer = 1024

// openRace races the shown endpoints, or says in the header why not.
func (a *app) openRace() tea.Cmd {
	r, notes, err := a.opts.Racer.Prepare(a.table.ShownNames())
	if err != nil {
		a.flashFor("race: "+err.Error(), raceNoteFor)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.raceID++
	rs := &raceState{id: a.raceID, race: r, ctx: ctx, cancel: cancel, msgs: make(chan tea.Msg, raceBuffer)}
	rs.view = raceview.New(raceview.Options{Lanes: r.Lanes(), Title: r.Title(), Rounds: 1, Over: true,
		Again: func() { rs.again = true }})
	a.race = rs
	a.raceBack, a.screen, a.dirty = a.screen, screenRace, true
	rs.view.Update(tea.WindowSizeMsg{Width: a.width, Height: a.height})
	if len(notes) > 0 {
		rs.view.Update(raceview.Summary{Text: strings.Join(notes, "\n")})
	}
	return tea.Batch(a.raceRound(), a.raceNext(rs))
}

// raceNoteFor is how long the header says why a race did not start.
const raceNoteFor = 6 * time.Second

// raceRound starts the next round in a command.
func (a *app) raceRound() tea.Cmd {
	rs := a.race
	rs.round++
	rs.running = true
	rs.rounds.Add(1)
	cmd := a.raceToView(raceview.Started{Round: rs.round})
	run := func() tea.Msg {
		defer rs.rounds.Done()
		send := func(m tea.Msg) {
			select {
			case rs.msgs <- m:
			case <-rs.ctx.Done():
			}
		}
		// The end goes the chunks' way, so it reaches the view after
		// every result of the round.
		send(rs.race.Run(rs.ctx, send))
		return nil
	}
	return tea.Batch(cmd, run)
}

// raceNext delivers the race's next chunk or result to Update.
func (a *app) raceNext(rs *raceState) tea.Cmd {
	return func() tea.Msg {
		select {
		case m := <-rs.msgs:
			return raceMsg{id: rs.id, msg: m}
		case <-rs.ctx.Done():
			return nil
		}
	}
}

// raceToView hands msg to the race view; what it asks for (its ticks)
// comes back wrapped, so it reaches the view again.
func (a *app) raceToView(msg tea.Msg) tea.Cmd {
	rs := a.race
	a.dirty = true
	_, cmd := rs.view.Update(msg)
	if cmd == nil {
		return nil
	}
	return func() tea.Msg { return raceMsg{id: rs.id, msg: cmd()} }
}

// onRace hands the race's messages to its view: chunks, results, the
// view's ticks and a round's end.
func (a *app) onRace(msg raceMsg) tea.Cmd {
	rs := a.race
	if rs == nil || msg.id != rs.id || msg.msg == nil {
		return nil
	}
	ended, isEnd := msg.msg.(raceview.Ended)
	if isEnd {
		ended.Round = rs.round
		msg.msg = ended
	}
	cmd := a.raceToView(msg.msg)
	switch msg.msg.(type) {
	case raceview.Chunk, raceview.Finished:
		return tea.Batch(cmd, a.raceNext(rs))
	case raceview.Ended:
		rs.running = false
		cmds := []tea.Cmd{cmd, a.raceNext(rs)}
		if rs.again {
			rs.again = false
			cmds = append(cmds, a.raceRound())
		}
		return tea.Batch(cmds...)
	}
	return cmd
}

// raceKey handles a key while the race shows: esc returns to the
// dashboard, q quits, space (the view's) races again.
func (a *app) raceKey(k tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(k, a.keys.Back):
		return a.closeRace()
	case key.Matches(k, a.keys.Quit):
		return tea.Sequence(a.closeRace(), tea.Quit) // closed (its recording complete) before the program ends
	}
	if k.String() != "space" {
		return nil
	}
	cmd := a.raceToView(k)
	if a.race.again && !a.race.running {
		a.race.again = false
		return tea.Batch(cmd, a.raceRound())
	}
	return cmd
}

// raceClosedMsg says a race closed, with what went wrong.
type raceClosedMsg struct{ err error }

// closeRace ends the race (mid-round too) and shows the dashboard again;
// the race is closed in the command it returns, once its round returned.
func (a *app) closeRace() tea.Cmd {
	rs := a.race
	if rs == nil {
		return nil
	}
	rs.cancel()
	a.race, a.screen, a.dirty = nil, a.raceBack, true
	a.layout()
	return func() tea.Msg {
		rs.rounds.Wait() // a round cut short returns soon
		return raceClosedMsg{rs.race.Close()}
	}
}

// onRaceClosed says in the header why a race could not be closed cleanly
// (its recording incomplete).
func (a *app) onRaceClosed(msg raceClosedMsg) {
	if msg.err != nil {
		a.flashFor("race: "+msg.err.Error(), raceNoteFor)
	}
}
