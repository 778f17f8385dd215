package tui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/common"
)

// stripOnce runs the strip's read and applies it, as its tick would.
func stripOnce(m Model) {
	m.Update(m.a.stripRead(m.a.strip.id)())
}

func stripRow(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, " live · ") || strings.HasPrefix(line, " last · ") {
			return line
		}
	}
	return ""
}

// With LiveStrip (the demo) the main screen has a row with the text a
// probe is streaming, its tail where it is long, and it follows the
// stream as it grows; a finished stream shows as "last". Without the
// option the screen is unchanged.
func TestLiveStripStreamsOnTheMainScreen(t *testing.T) {
	opts := testOptions()
	opts.LiveStrip = true
	m := newSync(t, opts, 120, 40)
	stripOnce(m)
	row := stripRow(plain(m))
	for _, want := range []string{"last · llama-8b", "stay inert.", "18 tok ·   83 tok/s"} {
		if !strings.Contains(row, want) {
			t.Fatalf("strip row %q lacks %q:\n%s", row, want, plain(m))
		}
	}
	if strings.Contains(row, "\x1b") || strings.Contains(m.View().Content, "\x1b[31mred") {
		t.Errorf("streamed escape sequences reached the terminal: %q", row)
	}
	store := m.a.data.(*telemetry.Store)
	text := "The quick brown fox"
	prevText := ""
	for k, word := range []string{" streams", " one", " word", " at", " a", " time"} {
		text += word
		store.Observe(telemetry.Observation{Kind: telemetry.KindLiveText, Endpoint: "qwen-72b", At: tNow.Add(time.Duration(k) * time.Millisecond),
			Live: &telemetry.LiveText{Text: text, Tokens: 5 + k, TPS: 40}})
		stripOnce(m)
		row = stripRow(plain(m))
		if !strings.Contains(row, "live · qwen-72b "+common.FitRight(strconv.Itoa(5+k), 5, "…")+" tok ·   40 tok/s  "+text) {
			t.Fatalf("after %q the strip shows %q", word, row)
		}
		// The row grows at its end: what was there stays in place.
		_, shown, _ := strings.Cut(row, "tok/s")
		if !strings.HasPrefix(shown, prevText) {
			t.Errorf("the row moved: %q, then %q", prevText, shown)
		}
		prevText = shown
	}
	long := strings.Repeat("lorem ipsum ", 40) + "THE END"
	store.Observe(telemetry.Observation{Kind: telemetry.KindLiveText, Endpoint: "qwen-72b", At: tNow.Add(time.Second),
		Live: &telemetry.LiveText{Text: long, Tokens: 80, TPS: 40}})
	stripOnce(m)
	// A long text fills the row, then starts it again with what follows,
	// marked "…": the row shows the last page, ending where the text ends.
	if row = stripRow(plain(m)); !strings.Contains(row, "tok/s …") || !strings.HasSuffix(strings.TrimRight(row, " "), "END") || len([]rune(row)) > 120 {
		t.Errorf("a long text should show its last page in one row: %q", row)
	}

	off := newSync(t, testOptions(), 120, 40)
	if row := stripRow(plain(off)); row != "" {
		t.Errorf("strip without the option: %q", row)
	}
	for _, v := range []Model{m, off} {
		if rows := strings.Count(plain(v), "\n") + 1; rows != 40 {
			t.Errorf("%d rows on a 40-row screen", rows)
		}
	}
}

// A change of the live row alone redraws the row into the frame kept
// from the last full render: the frame is what a full render gives.
func TestLiveStripRowAloneMatchesAFullRender(t *testing.T) {
	opts := testOptions()
	opts.LiveStrip = true
	m := newSync(t, opts, 160, 50)
	stripOnce(m)
	_ = m.View()
	store := m.a.data.(*telemetry.Store)
	for k := range 5 {
		store.Observe(telemetry.Observation{Kind: telemetry.KindLiveText, Endpoint: "qwen-72b", At: tNow.Add(time.Duration(k) * time.Millisecond),
			Live: &telemetry.LiveText{Text: strings.Repeat("token ", k+1), Tokens: k + 1, TPS: 40}})
		stripOnce(m)
		if m.a.dirty || !m.a.strip.dirty {
			t.Fatalf("a row-only change: dirty %v, strip.dirty %v", m.a.dirty, m.a.strip.dirty)
		}
		fast := m.View().Content
		m.a.dirty = true
		if full := m.View().Content; fast != full {
			t.Fatalf("row-only frame differs from a full render:\n%s\n---\n%s", fast, full)
		}
	}
}
