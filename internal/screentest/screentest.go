// Package screentest reads a captured ttftop main screen (a golden
// frame, a tmux capture) back into its sections: the header, the table's
// rows with their server groups and chart lines, the selected endpoint's
// info line, the GPU panel, the alerts and the footer. Tests in tui and
// cmd/ttftop share it so they parse a screen the same way.
package screentest

import (
	"errors"
	"strings"
	"testing"

	"github.com/ttftop/ttftop/tui/common"
)

// Kind is what a table line is.
type Kind int

// The kinds of table lines.
const (
	Blank Kind = iota
	Row        // an endpoint's row
	Group      // a server's line above its rows
	Chart      // a line of a row's charts
)

// Line is one line of the table under its column header.
type Line struct {
	Kind Kind
	Text string
	// Name is a row's ENDPOINT cell as shown; Server the group it is
	// under (its line above); Selected: drawn with the cursor mark.
	Name, Server string
	Selected     bool
}

// Screen is a main screen split into sections; every field holds the
// lines as captured.
type Screen struct {
	Header      []string // the two lines above the table
	ColumnTitle string   // the table's column header
	Table       []Line   // under the column header, blank lines included
	Info        string   // the selected endpoint's line under the table
	GPUs        []string // the GPU panel, its title first; nil without one
	AlertsTitle string
	Alerts      []string // the alert lines under the title, blank ones included
	Footer      string
}

// headerLines is the header's height (tui/header.Height).
const headerLines = 2

// marks are what starts a pane's title or the selected row: a space, or
// the selection mark in Unicode or ASCII.
var marks = []string{" ", "▸", ">"}

func titled(l, title string) bool {
	for _, m := range marks {
		if strings.HasPrefix(l, m+title) {
			return true
		}
	}
	return false
}

// Parse splits a main screen (lines separated by \n; a final newline is
// dropped) into its sections.
func Parse(screen string) (Screen, error) {
	lines := strings.Split(strings.TrimSuffix(screen, "\n"), "\n")
	alerts := -1
	for i := headerLines + 1; i < len(lines); i++ {
		if titled(lines[i], "ALERTS ") {
			alerts = i
		}
	}
	if alerts < 0 || len(lines) < headerLines+3 {
		return Screen{}, errors.New("not a main screen: no ALERTS title under a table")
	}
	end := alerts // where the table and its info line end
	var s Screen
	for i := headerLines + 1; i < alerts; i++ {
		if titled(lines[i], "GPU ") {
			end = i
			s.GPUs = lines[i:alerts]
			break
		}
	}
	s.Header = lines[:headerLines]
	s.ColumnTitle = lines[headerLines]
	s.Info = lines[end-1]
	server := ""
	for _, l := range lines[headerLines+1 : end-1] {
		ln := classify(l)
		switch ln.Kind {
		case Group:
			server = ln.Name
		case Row:
			if body := []rune(l); len(body) > 1 && body[1] == ' ' {
				ln.Server = server // indented under its server's line
			}
		}
		s.Table = append(s.Table, ln)
	}
	s.AlertsTitle = lines[alerts]
	s.Alerts = lines[alerts+1 : len(lines)-1]
	s.Footer = lines[len(lines)-1]
	return s, nil
}

func classify(l string) Line {
	ln := Line{Text: l}
	f := strings.Fields(l)
	switch {
	case len(f) == 0:
		ln.Kind = Blank
	case strings.Contains(l, " endpoints") && strings.ContainsAny(l, "·|") && strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "  "):
		ln.Kind, ln.Name = Group, f[0] // "host:port · N endpoints · …" ("|" in ASCII)
	case strings.ContainsAny(l, "│└|+") || strings.Contains(l, " now"):
		ln.Kind = Chart // axes and time labels, in Unicode or ASCII
	default:
		ln.Kind = Row
		ln.Selected = strings.HasPrefix(l, "▸") || strings.HasPrefix(l, ">")
		ln.Name = strings.TrimLeft(f[0], "▸>")
		if ln.Name == "" && len(f) > 1 {
			ln.Name = f[1]
		}
	}
	return ln
}

// Rows are the endpoint rows, in screen order.
func (s Screen) Rows() []Line {
	var out []Line
	for _, l := range s.Table {
		if l.Kind == Row {
			out = append(out, l)
		}
	}
	return out
}

// FullName is a row's name with its group's server in front, as the
// endpoint is named outside the table.
func (l Line) FullName() string {
	if l.Server != "" {
		return l.Server + "/" + l.Name
	}
	return l.Name
}

// BlankRun is the longest run of blank lines in a section: the table
// under its column header, the GPU panel, the alert lines.
func BlankRun(lines []string) int {
	run, longest := 0, 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// TableText is the table's lines under its column header, as captured.
func (s Screen) TableText() []string {
	out := make([]string, len(s.Table))
	for i, l := range s.Table {
		out[i] = l.Text
	}
	return out
}

// Apart checks a main screen of many similar endpoints: each endpoint
// row (named under its server's line when grouped) and each alert line
// must read as exactly one of names (common.ReadsAs: what an elided cell
// could stand for), and each alert line must say its objective, its
// value against the threshold and, for a burn rate, its severity. It
// returns how many rows and alert lines it read.
func Apart(t testing.TB, screen string, names []string) (rows, alerts int) {
	t.Helper()
	identify := func(what, shown string) {
		t.Helper()
		var hits []string
		for _, n := range names {
			if common.ReadsAs(shown, n, "…") {
				hits = append(hits, n)
			}
		}
		if len(hits) != 1 {
			t.Errorf("%s %q reads as %d endpoints %v:\n%s", what, shown, len(hits), hits, screen)
		}
	}
	sc, err := Parse(screen)
	if err != nil {
		t.Fatalf("%v:\n%s", err, screen)
	}
	for _, r := range sc.Rows() {
		rows++
		identify("row", r.FullName())
	}
	for _, l := range sc.Alerts {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		alerts++
		if len(f) < 4 {
			t.Errorf("alert line without endpoint and objective: %q", l)
			continue
		}
		identify("alert", f[1])
		if strings.Contains(l, "burn ") && !strings.Contains(l, "page") && !strings.Contains(l, "ticket") {
			t.Errorf("burn-rate alert without its severity: %q", l)
		}
		if !strings.Contains(l, " > ") && !strings.Contains(l, " vs ") && !strings.Contains(l, " ≤ ") {
			t.Errorf("alert without value against threshold: %q", l)
		}
	}
	return rows, alerts
}
