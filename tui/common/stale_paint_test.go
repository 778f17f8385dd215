package common

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/format"
)

var sgrParams = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// faint reports whether painted text turns on SGR 2 (faint) before its text.
func faint(painted string) bool {
	for _, m := range sgrParams.FindAllStringSubmatch(painted, -1) {
		if slices.Contains(strings.Split(m[1], ";"), "2") {
			return true
		}
	}
	return false
}

// A stale figure must never look like a live one: from the snapshot state
// through the cell kind to the theme's paint, it is drawn faint in every
// theme, on ordinary and selected rows, and a live figure is not.
func TestStaleCellIsPaintedFaint(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 14, 0, time.UTC)
	v := 812.0
	snap := telemetry.SignalSnapshot{Unit: "ms", Value: &v, ObservedAt: now.Add(-14 * time.Second)}
	live, stale := snap, snap
	live.State, stale.State = telemetry.Live, telemetry.Stale
	liveCell := format.Signal(live, true, "812ms", now, 20, "—")
	staleCell := format.Signal(stale, true, "812ms", now, 20, "—")
	for _, name := range themes.Names() {
		th, err := themes.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		ctx := &Context{Styles: themes.NewStyles(th), Now: now}
		for role, r := range map[string]*themes.Roles{"normal": &ctx.Styles.Normal, "selected": &ctx.Styles.Selected} {
			if got := ctx.Paint(r, staleCell.Kind).S(staleCell.Text); !faint(got) {
				t.Errorf("%s/%s: stale cell %q painted %q, not faint", name, role, staleCell.Text, got)
			}
			if got := ctx.Paint(r, liveCell.Kind).S(liveCell.Text); faint(got) {
				t.Errorf("%s/%s: live cell %q painted %q, faint like a stale one", name, role, liveCell.Text, got)
			}
		}
	}
}
