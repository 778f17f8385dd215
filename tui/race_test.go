package tui

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/tui/raceview"
)

// scriptedRacer races the names it is given (all of them, or says
// none can when err is set); its races stream what the test feeds.
type scriptedRacer struct {
	asked    chan []string
	feed     chan tea.Msg // what Run sends; closing it ends the round
	closed   chan struct{}
	err      error
	closeErr error // what Close returns
}

func newScriptedRacer() *scriptedRacer {
	return &scriptedRacer{asked: make(chan []string, 4), feed: make(chan tea.Msg), closed: make(chan struct{})}
}

func (s *scriptedRacer) Prepare(names []string) (Race, []string, error) {
	s.asked <- names
	if s.err != nil {
		return nil, nil, s.err
	}
	lanes := make([]raceview.Lane, len(names))
	for i, n := range names {
		lanes[i] = raceview.Lane{Label: string(rune('A' + i)), Name: n}
	}
	return &scriptedRace{s: s, lanes: lanes}, []string{"phi-3: not probed"}, nil
}

type scriptedRace struct {
	s     *scriptedRacer
	lanes []raceview.Lane
}

func (r *scriptedRace) Lanes() []raceview.Lane { return r.lanes }
func (r *scriptedRace) Title() string          { return "· scripted" }
func (r *scriptedRace) Close() error {
	close(r.s.closed)
	return r.s.closeErr
}

func (r *scriptedRace) Run(ctx context.Context, send func(tea.Msg)) raceview.Ended {
	for {
		select {
		case m, ok := <-r.s.feed:
			if !ok {
				return raceview.Ended{Positions: []int{1, 0}}
			}
			send(m)
		case <-ctx.Done():
			return raceview.Ended{}
		}
	}
}

// R races the rows the table shows, the selected one first; esc
// returns to the dashboard.
func TestRaceKeyRacesTheShownRowsSelectedFirst(t *testing.T) {
	racer := newScriptedRacer()
	opts := testOptions()
	opts.Racer = racer
	m := newSync(t, opts, 160, 40)
	press(m, "/", "q", "w", "e", "n", "enter", "down")
	sel, ok := m.a.table.Selected()
	if !ok {
		t.Fatal("no row selected")
	}
	press(m, "R")
	asked := <-racer.asked
	if len(asked) != 2 || asked[0] != sel.Name() || !slices.Contains(asked, "qwen-72b") {
		t.Fatalf("raced %v; want the two qwen rows shown, %s (selected) first", asked, sel.Name())
	}
	screen := plain(m)
	for _, want := range []string{" A  " + asked[0], " B  " + asked[1], "phi-3: not probed", "esc back"} {
		if !strings.Contains(screen, want) {
			t.Errorf("race screen lacks %q:\n%s", want, screen)
		}
	}
	press(m, "esc")
	if m.a.screen != screenMain || !strings.Contains(plain(m), "TTFT p50") {
		t.Fatalf("esc did not return to the dashboard:\n%s", plain(m))
	}
}

// Fewer than two endpoints that can race: the header says why and the
// dashboard stays.
func TestRaceKeySaysWhyNoRace(t *testing.T) {
	racer := newScriptedRacer()
	racer.err = errors.New("a race needs two probed endpoints shown")
	opts := testOptions()
	opts.Racer = racer
	m := newSync(t, opts, 160, 40)
	press(m, "R")
	if m.a.screen != screenMain || !strings.Contains(plain(m), "race: a race needs two probed endpoints shown") {
		t.Fatalf("no race and no reason said:\n%s", plain(m))
	}
}

// Without a Racer (a replay) R does nothing.
func TestRaceKeyOffWithoutRacer(t *testing.T) {
	m := newSync(t, testOptions(), 160, 40)
	press(m, "R")
	if m.a.screen != screenMain || m.a.race != nil {
		t.Fatal("R opened something without a Racer")
	}
}

// The real program: R opens the race over the dashboard and each chunk
// the race sends is drawn as it comes, the text growing; the end of the
// round shows the result; esc brings the dashboard back.
func TestRaceKeyStreamsInTheProgram(t *testing.T) {
	racer := newScriptedRacer()
	opts := testOptions()
	opts.Racer = racer
	tm := start(t, opts, 160, 40)
	waitOut(t, tm, "qwen-72b")
	settle(t, tm)
	send(tm, "R")
	waitOut(t, tm, "round 1: racing")
	names := <-racer.asked
	for i, word := range []string{"alpha", "bravo", "charlie"} {
		racer.feed <- raceview.Chunk{Racer: 0, Text: word + " ", At: time.Duration(i+1) * 10 * time.Millisecond,
			TTFT: 10 * time.Millisecond, Tokens: i + 1}
		waitOut(t, tm, word)
	}
	racer.feed <- raceview.Finished{Racer: 0, OK: true, TTFT: 10 * time.Millisecond, E2E: 30 * time.Millisecond, Tokens: 3}
	racer.feed <- raceview.Finished{Racer: 1, Err: "http: 500"}
	close(racer.feed)
	waitOut(t, tm, "result: 1st A")
	send(tm, "esc")
	waitOut(t, tm, "TTFT p50")
	select {
	case <-racer.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the race was never closed after esc")
	}
	frame := finishFrame(t, tm)
	if !strings.Contains(frame, names[0]) || strings.Contains(frame, "round 1") {
		t.Errorf("after esc the dashboard should show again:\n%s", frame)
	}
}

// startCmds runs cmd in the background as the program would (each
// command of a batch on its own goroutine), dropping what they return:
// the race's round runs until its context ends.
func startCmds(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		if b, ok := cmd().(tea.BatchMsg); ok {
			for _, c := range b {
				startCmds(c)
			}
		}
	}()
}

// cmdsOf runs cmd and the commands of the batches and sequences it
// returns, in order, and returns the messages they end with.
func cmdsOf(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	v := reflect.ValueOf(msg)
	if v.Kind() != reflect.Slice {
		return []tea.Msg{msg}
	}
	var out []tea.Msg
	for i := range v.Len() {
		if c, ok := v.Index(i).Interface().(tea.Cmd); ok {
			out = append(out, cmdsOf(c)...)
		}
	}
	return out
}

// q and ctrl+c in the race quit ttftop, closing the race first (its
// round cancelled, Close called) and only then quitting; what Close
// says went wrong shows in the header.
func TestRaceQuitKeysCloseTheRace(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		racer := newScriptedRacer()
		racer.closeErr = errors.New("--record: disk full")
		opts := testOptions()
		opts.Racer = racer
		m := newSync(t, opts, 160, 40)
		startCmds(m.a.update(keyMsg("R")))
		<-racer.asked
		msgs := cmdsOf(m.a.update(keyMsg(k)))
		if len(msgs) != 2 {
			t.Fatalf("%s: %d messages, want the race closed, then quit: %#v", k, len(msgs), msgs)
		}
		closed, isClosed := msgs[0].(raceClosedMsg)
		if _, quit := msgs[1].(tea.QuitMsg); !isClosed || !quit || m.a.race != nil {
			t.Fatalf("%s: %#v; want the race closed, then quit", k, msgs)
		}
		select {
		case <-racer.closed:
		default:
			t.Fatalf("%s: Close not called before quitting", k)
		}
		m.Update(closed)
		if !strings.Contains(plain(m), "race: --record: disk full") {
			t.Errorf("%s: Close's error not said:\n%s", k, plain(m))
		}
	}
}
