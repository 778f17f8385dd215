//go:build integration

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/probetest"
)

// paneShot is one capture of the race's pane and when it was taken.
type paneShot struct {
	before, after time.Time
	screen        string
}

var wordRE = regexp.MustCompile(`w(\d{4}),`)

// laneTexts splits a race screen into each lane's text rows, joined
// (the rows are exactly a lane wide, so a word cut by the wrap is whole
// again): columns split at the separator, bands at the lanes' titles.
func laneTexts(screen string, lanes int) []string {
	texts := make([]string, lanes)
	rows := strings.Split(screen, "\n")
	band := -1
	for _, row := range rows {
		if strings.Contains(row, " │") {
			// tmux drops trailing blanks: an empty last column leaves " │".
			for i, cell := range strings.SplitN(row, " │", lanes) {
				if i > 0 {
					cell = strings.TrimPrefix(cell, " ")
				}
				texts[i] += cell
			}
			continue
		}
		for i := range lanes {
			if strings.HasPrefix(row, " "+abLabel(i)+"  ") {
				band = i
			}
		}
		if band >= 0 && !strings.HasPrefix(row, "result:") {
			texts[band] += row
		}
	}
	return texts
}

// visibleTokens is how many of a lane's tokens are on screen: the words
// arrive in order, so the highest index seen, plus one.
func visibleTokens(text string) int {
	n := 0
	for _, m := range wordRE.FindAllStringSubmatch(text, -1) {
		k, _ := strconv.Atoi(m[1])
		n = max(n, k+1)
	}
	return n
}

func writtenBy(tr probetest.Truth, at time.Time) int {
	n := 0
	for _, w := range tr.Writes {
		if !w.After(at) {
			n++
		}
	}
	return n
}

// The race in a real terminal (tmux) at 80×24 (bands) and 160×50
// (columns), against two paced servers: each racer's text grows on
// screen at its own server's pace — never ahead of what the server had
// written when the screen was captured, and never far behind — and the
// result names the faster one first.
func TestRaceInRealTerminal(t *testing.T) {
	bin, dir, tm := tmuxWithBinary(t)
	keepTmuxServer(t, tm)
	// lag is how far the screen may trail the server on a loaded machine:
	// a frame (1/30 s), tmux's own redraw and scheduling delays.
	const lag = 600 * time.Millisecond
	for _, size := range [][2]int{{80, 24}, {160, 50}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			fast := probetest.StartPaced(t, probetest.Pace{TTFT: 300 * time.Millisecond, Gap: 50 * time.Millisecond, Reasoning: 5, Answer: 35})
			slow := probetest.StartPaced(t, probetest.Pace{TTFT: 600 * time.Millisecond, Gap: 120 * time.Millisecond, Answer: 20})
			session := fmt.Sprintf("race%d", size[0])
			if out, err := tm("new-session", "-d", "-s", session, "-x", strconv.Itoa(size[0]), "-y", strconv.Itoa(size[1]),
				"env", "TERM=xterm-256color", "XDG_CONFIG_HOME="+dir, bin, "race", fast.URL, slow.URL, "--model", "m"); err != nil {
				t.Fatalf("tmux: %v %s", err, out)
			}
			defer func() { _, _ = tm("kill-session", "-t", session) }()
			var shots []paneShot
			deadline := time.Now().Add(60 * time.Second)
			for time.Now().Before(deadline) {
				before := time.Now()
				out, err := tm("capture-pane", "-p", "-t", session)
				if err != nil {
					t.Fatalf("capture: %v %s", err, out)
				}
				shots = append(shots, paneShot{before, time.Now(), out})
				if strings.Contains(out, "result: ") {
					break
				}
				time.Sleep(100 * time.Millisecond) // the sampling period of the captures, not synchronisation
			}
			last := shots[len(shots)-1].screen
			if !strings.Contains(last, "result: 1st A") || !strings.Contains(last, "2nd B") {
				t.Fatalf("no result naming A first:\n%s", last)
			}
			if !strings.Contains(last, "requests started") {
				t.Errorf("the start spread is not said:\n%s", last)
			}
			truths := []probetest.Truth{fast.Truths()[0], slow.Truths()[0]}
			seen := []map[int]bool{{}, {}}
			series := []string{"", ""} // on screen / written by the server, per capture
			var mid string
			for _, s := range shots {
				for i, text := range laneTexts(s.screen, 2) {
					v := visibleTokens(text)
					seen[i][v] = true
					series[i] += fmt.Sprintf(" %.1fs:%d/%d", s.after.Sub(truths[i].Received).Seconds(), v, writtenBy(truths[i], s.after))
					if ahead := writtenBy(truths[i], s.after); v > ahead {
						t.Errorf("lane %s shows %d tokens at a capture when its server had written %d", abLabel(i), v, ahead)
					}
					if behind := writtenBy(truths[i], s.before.Add(-lag)); v < behind {
						t.Errorf("lane %s shows %d tokens, its server had written %d more than %v earlier", abLabel(i), v, behind, lag)
					}
					if i == 1 && v >= 5 && mid == "" {
						mid = s.screen
					}
				}
			}
			for i := range 2 {
				// 40 and 20 tokens over 2–3 s, captured every ~0.1 s: the
				// text grows in many steps, not at once.
				if len(seen[i]) < 6 {
					t.Errorf("lane %s took only %d distinct lengths on screen: %v", abLabel(i), len(seen[i]), seen[i])
				}
			}
			t.Logf("tokens on screen/written by the server, at seconds since the request arrived:\nA%s\nB%s", series[0], series[1])
			t.Logf("%d captures; mid-race:\n%s\nend:\n%s", len(shots), mid, last)
		})
	}
}

// q in the middle of a round quits at once, exit 0: the user ended the
// race, no endpoint failed.
func TestRaceQuitMidRound(t *testing.T) {
	bin, dir, tm := tmuxWithBinary(t)
	a := probetest.StartPaced(t, probetest.Pace{TTFT: 50 * time.Millisecond, Gap: 200 * time.Millisecond, Answer: 300})
	b := probetest.StartPaced(t, probetest.Pace{TTFT: 50 * time.Millisecond, Gap: 300 * time.Millisecond, Answer: 300})
	status := dir + "/status"
	if out, err := tm("new-session", "-d", "-s", "quit", "-x", "100", "-y", "30", "sh", "-c",
		"env TERM=xterm-256color XDG_CONFIG_HOME="+dir+" "+bin+" race "+a.URL+" "+b.URL+" --model m --max-tokens 300; echo $? > "+status+"; sleep 30"); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	waitPane(t, tm, "quit", 20*time.Second, func(s string) bool { return strings.Contains(s, "TTFT") && strings.Contains(s, "w0001,") })
	if _, err := tm("send-keys", "-t", "quit", "q"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(status); err == nil && len(b) > 0 {
			if got := strings.TrimSpace(string(b)); got != "0" {
				screen, _ := tm("capture-pane", "-p", "-t", "quit")
				t.Fatalf("exit %s after q mid-round:\n%s", got, screen)
			}
			return
		}
		time.Sleep(100 * time.Millisecond) // polling for the exit status file, with a deadline
	}
	t.Fatal("race did not exit on q")
}

// The demo's first screen streams tokens without a key: its live row
// shows a model's text, and the text moves on between captures.
func TestDemoStreamsTokensOnFirstScreen(t *testing.T) {
	bin, dir, tm := tmuxWithBinary(t)
	keepTmuxServer(t, tm)
	for _, size := range [][2]int{{80, 24}, {160, 50}} {
		session := fmt.Sprintf("demo%d", size[0])
		if out, err := tm("new-session", "-d", "-s", session, "-x", strconv.Itoa(size[0]), "-y", strconv.Itoa(size[1]),
			"env", "TERM=xterm-256color", "XDG_CONFIG_HOME="+dir, bin, "demo"); err != nil {
			t.Fatalf("tmux: %v %s", err, out)
		}
		liveRow := func(s string) string {
			for _, line := range strings.Split(s, "\n") {
				if strings.HasPrefix(line, " live · ") {
					return line
				}
			}
			return ""
		}
		first := liveRow(waitPane(t, tm, session, 40*time.Second, func(s string) bool { return wordsIn(liveRow(s)) >= 3 }))
		later := liveRow(waitPane(t, tm, session, 20*time.Second, func(s string) bool {
			r := liveRow(s)
			return wordsIn(r) >= 3 && r != first
		}))
		t.Logf("%dx%d live row, then:\n%s\n%s", size[0], size[1], first, later)
		_, _ = tm("kill-session", "-t", session)
	}
}

// wordsIn counts the words of streamed text in a live row (after the
// model's name, before the count).
func wordsIn(row string) int {
	_, text, ok := strings.Cut(row, "  ")
	if !ok {
		return 0
	}
	return len(strings.Fields(text)) - 5 // "N tok · M tok/s"
}

// keepTmuxServer holds a session open for the whole test: killing a
// test's only session ends the tmux server, and the next new-session
// could reach it while it exits ("server exited unexpectedly").
func keepTmuxServer(t *testing.T, tm func(...string) (string, error)) {
	t.Helper()
	if out, err := tm("new-session", "-d", "-s", "keep", "sleep", "3600"); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
}

// The dashboard's race key in a real terminal: R races the endpoints the
// table shows, the selected one first, over the dashboard; each lane's
// text grows as its server streams; esc brings the dashboard back.
func TestDashboardRaceKeyInRealTerminal(t *testing.T) {
	bin, dir, tm := tmuxWithBinary(t)
	keepTmuxServer(t, tm)
	a := probetest.StartPaced(t, probetest.Pace{TTFT: 100 * time.Millisecond, Gap: 60 * time.Millisecond, Answer: 40})
	b := probetest.StartPaced(t, probetest.Pace{TTFT: 200 * time.Millisecond, Gap: 150 * time.Millisecond, Answer: 30})
	if out, err := tm("new-session", "-d", "-s", "dash", "-x", "160", "-y", "50",
		"env", "TERM=xterm-256color", "XDG_CONFIG_HOME="+dir, bin, a.URL, b.URL, "--model", "m", "--interval", "30s",
		"--record", filepath.Join(dir, "session.jsonl")); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	port := func(u string) string { return u[strings.LastIndex(u, ":")+1:] }
	waitPane(t, tm, "dash", 30*time.Second, func(s string) bool {
		return strings.Contains(s, port(a.URL)) && strings.Contains(s, port(b.URL)) && strings.Contains(s, " probe ")
	})
	// The rows sort by name: the second is the higher port.
	second := max(port(a.URL), port(b.URL))
	if _, err := tm("send-keys", "-t", "dash", "j", "R"); err != nil {
		t.Fatal(err)
	}
	laneA := regexp.MustCompile(`(?m)^ A  (\S+)`)
	screen := waitPane(t, tm, "dash", 20*time.Second, func(s string) bool { return laneA.MatchString(s) })
	if name := laneA.FindStringSubmatch(screen)[1]; !strings.Contains(name, second) {
		t.Errorf("lane A is %s; want the selected endpoint (port %s) first:\n%s", name, second, screen)
	}
	seen := map[int]bool{}
	var shots []string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out, err := tm("capture-pane", "-p", "-t", "dash")
		if err != nil {
			t.Fatalf("capture: %v %s", err, out)
		}
		seen[visibleTokens(laneTexts(out, 2)[0])] = true
		shots = append(shots, out)
		if strings.Contains(out, "result: ") {
			break
		}
		time.Sleep(100 * time.Millisecond) // the sampling period of the captures, not synchronisation
	}
	last := shots[len(shots)-1]
	if !strings.Contains(last, "result: 1st") || !strings.Contains(last, "esc back") {
		t.Fatalf("the race did not end with a result:\n%s", last)
	}
	// Lane A's 30–40 tokens over 2–5 s, captured every ~0.1 s: its text
	// grows in many steps.
	if len(seen) < 5 {
		t.Errorf("lane A took only %d distinct lengths on screen: %v", len(seen), seen)
	}
	if _, err := tm("send-keys", "-t", "dash", "Escape"); err != nil {
		t.Fatal(err)
	}
	waitPane(t, tm, "dash", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "TTFT p50") && !strings.Contains(s, "result: ")
	})
	// The dashboard records: the race was kept beside its recording.
	_, events, ok, err := readRaceRecording(filepath.Join(dir, "session.race1.jsonl"))
	if !ok || err != nil || len(events) == 0 || events[len(events)-1].Ended == nil {
		t.Errorf("the race was not kept beside the dashboard's recording: ok %v, %v, %d events", ok, err, len(events))
	}
	t.Logf("%d captures, lane A lengths %v; %d events recorded; end:\n%s", len(shots), seen, len(events), last)
}
