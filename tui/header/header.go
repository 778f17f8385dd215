// Package header draws the two top lines: the app line (frozen state,
// endpoint count, window, refresh, alerts, clock) and the sources line
// (each source's health), so the monitor itself is monitored.
package header

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/alerts"
	"github.com/ttftop/ttftop/tui/common"
)

// Info is what the header shows.
type Info struct {
	Title   string
	Sources []telemetry.SourceStatus
	Alerts  alerts.Counts
	Frozen  bool
	// Shown and Total count serving endpoints (replicas, not the model
	// rows that sum them); ModelsShown and Models count model rows
	// (PromQL aggregates), 0 when there are none.
	Shown, Total        int
	ModelsShown, Models int
	// Down and Gone count the endpoints whose scrape target is down, or
	// no longer known to the store (telemetry.Endpoint.Target).
	Down, Gone int
	// Note is a transient message (e.g. "theme: light").
	Note string
	// NoSLO: no SLO engine, so "no alerts" means nothing is judged.
	NoSLO bool
	// Replay is set when playing a recording: the header then shows
	// "REPLAY 10× 03:12:44 (paused) 12:04/45:00" (speed, the replay's
	// time, the position within the recording) instead of the clock.
	Replay *Replay
	// Recording is the file a --record run writes ("" = none): REC badge.
	Recording string
	// Viewers > 0: a shared read-only session watched by that many.
	Viewers int
}

// Replay is the playback state shown in the header.
type Replay struct {
	Speed  float64
	Max    bool // Speed is the maximum: reads "max"
	Paused bool
	// First and Last bound the recording (zero: unknown).
	First, Last time.Time
	// Ended: playback reached the recording's last moment and holds it.
	Ended bool
	// Cut: the recording has no proper end (its recorder was killed or
	// crashed, or the file is damaged there), said once playback is there.
	Cut bool
}

// Height is the number of lines View returns.
const Height = 2

// View renders exactly Height lines of at most width cells.
func View(ctx *common.Context, in Info, width int) string {
	if width <= 0 {
		return "\n"
	}
	return appLine(ctx, in, width) + "\n" + sourcesLine(ctx, in.Sources, width)
}

type seg struct {
	text  string
	paint themes.Paint
}

func join(segs []seg, sep string, sepPaint themes.Paint) (string, int) {
	var b strings.Builder
	w := 0
	for i, s := range segs {
		if i > 0 {
			b.WriteString(sepPaint.S(sep))
			w += ansi.StringWidth(sep)
		}
		b.WriteString(s.paint.S(s.text))
		w += ansi.StringWidth(s.text)
	}
	return b.String(), w
}

func appLine(ctx *common.Context, in Info, width int) string {
	st := ctx.Styles
	r := &st.Normal
	g := ctx.Glyphs
	left := []seg{{" " + in.Title, st.Title}}
	if in.Frozen {
		left = append(left, seg{" FROZEN ", st.Frozen})
	}
	if in.Replay != nil {
		left = append(left, seg{replayText(ctx, in.Replay), r.Accent})
	}
	if in.Viewers > 0 {
		v := "READ-ONLY · " + strconv.Itoa(in.Viewers) + " viewer"
		if in.Viewers > 1 {
			v += "s"
		}
		left = append(left, seg{v, r.Accent})
	}
	if in.Recording != "" {
		left = append(left, seg{"REC " + common.Safe(filepath.Base(in.Recording)), r.Bad})
	}
	if in.Note != "" {
		left = append(left, seg{in.Note, r.Accent})
	}
	right := []seg{
		{countText(in, g.Dot), r.Faint},
		{"window " + figures.Window(ctx.Window), r.Text},
		{"refresh " + figures.Window(ctx.Refresh), r.Text},
	}
	if in.Down > 0 {
		right = append(right, seg{figures.Number(float64(in.Down)) + " DOWN", r.Bad})
	}
	if in.Gone > 0 {
		right = append(right, seg{figures.Number(float64(in.Gone)) + " GONE", r.Stale})
	}
	if in.NoSLO {
		right = append(right, seg{"no SLOs", r.Faint})
	} else {
		right = append(right, alertSegs(in.Alerts, in.Sources, r)...)
	}
	if in.Replay == nil { // a replay shows its time on the left
		right = append(right, seg{common.Clock(ctx.Now) + " ", r.Text})
	}
	sep := " " + g.Dot + " "
	l, lw := join(left, " ", r.Text)
	// Drop right-hand items from the left (least important first) until
	// the line fits; alerts and clock go last.
	for len(right) > 0 {
		rs, rw := join(right, sep, r.Faint)
		if lw+1+rw <= width {
			return l + common.Spaces(width-lw-rw) + rs
		}
		right = right[1:]
	}
	return common.Cut(l, width)
}

// countText is "5 endpoints", "2/5 endpoints" when a filter hides some,
// and "4 models · 5 endpoints" when replicas are summed into model rows.
func countText(in Info, dot string) string {
	count := func(shown, total int, one, many string) string {
		t := figures.Number(float64(total)) + " " + many
		if total == 1 {
			t = "1 " + one
		}
		if shown != total {
			t = figures.Number(float64(shown)) + "/" + t
		}
		return t
	}
	eps := count(in.Shown, in.Total, "endpoint", "endpoints")
	if in.Models == 0 {
		return eps
	}
	return count(in.ModelsShown, in.Models, "model", "models") + " " + dot + " " + eps
}

// replayText is "REPLAY 10× 03:12:44 (paused) 12:04/45:00".
func replayText(ctx *common.Context, rp *Replay) string {
	x := "×"
	if ctx.Glyphs.ASCII {
		x = "x"
	}
	speed := strconv.FormatFloat(rp.Speed, 'f', -1, 64) + x
	if rp.Max {
		speed = "max"
	}
	t := "REPLAY " + speed + " " + common.Clock(ctx.Now)
	switch {
	case rp.Ended && rp.Cut:
		t += " (ended: the recording is cut here, its recorder killed or crashed)"
	case rp.Ended:
		t += " (ended: the recording's last moment)"
	case rp.Paused:
		t += " (paused)"
	}
	if !rp.First.IsZero() && !rp.Last.IsZero() {
		total := max(rp.Last.Sub(rp.First), 0)
		pos := min(max(ctx.Now.Sub(rp.First), 0), total)
		t += " " + offset(pos, total >= time.Hour) + "/" + offset(total, total >= time.Hour)
	}
	return t
}

// offset formats a position in a recording: m:ss, or h:mm:ss.
func offset(d time.Duration, hours bool) string {
	s := int(d / time.Second)
	two := func(n int) string {
		if n < 10 {
			return "0" + strconv.Itoa(n)
		}
		return strconv.Itoa(n)
	}
	if hours {
		return strconv.Itoa(s/3600) + ":" + two(s/60%60) + ":" + two(s%60)
	}
	return two(s/60) + ":" + two(s%60)
}

// Cache keeps the last header drawn and draws again only when what it
// shows changed: a live-pane update repaints nothing here.
type Cache struct{ memo common.Memo }

// View is View, cached.
func (c *Cache) View(ctx *common.Context, in Info, width int) string {
	h := common.NewHash()
	h.Int(width)
	h.Str(ctx.Styles.Theme.Name)
	h.Bool(ctx.Glyphs.ASCII)
	h.Time(ctx.Now)
	h.Int(int(ctx.Window))
	h.Int(int(ctx.Refresh))
	h.Value(in) // every field: one added to Info redraws without a list to extend
	return c.memo.Get(h, func() string { return View(ctx, in, width) })
}

// failing counts the failing sources other than notifiers, and the
// failing notifiers (a notification that cannot be delivered).
func failing(srcs []telemetry.SourceStatus) (sources, notifiers int) {
	for _, s := range srcs {
		switch {
		case s.State != telemetry.Error:
		case s.Kind == telemetry.SourceNotify:
			notifiers++
		default:
			sources++
		}
	}
	return sources, notifiers
}

// alertSegs summarises the alerts; with nothing firing it is calm only
// when no source fails: a failing source may be why nothing fires. A
// failing notifier is always said: an alert nobody receives is news.
func alertSegs(c alerts.Counts, srcs []telemetry.SourceStatus, r *themes.Roles) []seg {
	failingSources, failingNotifiers := failing(srcs)
	var out []seg
	if c.Firing > 0 {
		out = append(out, seg{figures.Number(float64(c.Firing)) + " FIRING", r.Bad})
	}
	if c.Unknown > 0 {
		out = append(out, seg{figures.Number(float64(c.Unknown)) + " UNKNOWN", r.Stale})
	}
	if c.Pending > 0 {
		out = append(out, seg{figures.Number(float64(c.Pending)) + " pending", r.Warn})
	}
	switch {
	case len(out) > 0:
	case failingSources == 1:
		out = append(out, seg{"none firing, 1 source FAILING", r.Warn})
	case failingSources > 1:
		out = append(out, seg{"none firing, " + strconv.Itoa(failingSources) + " sources FAILING", r.Warn})
	case failingNotifiers > 0:
		out = append(out, seg{"none firing", r.Text})
	default:
		out = append(out, seg{"alerts: none firing", r.OK})
	}
	switch {
	case failingNotifiers == 1:
		out = append(out, seg{"1 notifier failing", r.Bad})
	case failingNotifiers > 1:
		out = append(out, seg{strconv.Itoa(failingNotifiers) + " notifiers failing", r.Bad})
	}
	return out
}

// sourceRank orders the sources line: failing notifiers, failing
// sources, stale ones, working ones with a caveat, then the rest, so a
// cut line loses the healthy.
func sourceRank(s telemetry.SourceStatus) int {
	switch {
	case s.State == telemetry.Error && s.Kind == telemetry.SourceNotify:
		return 0
	case s.State == telemetry.Error:
		return 1
	case s.State == telemetry.Stale:
		return 2
	case len(s.Warnings) > 0:
		return 3
	}
	return 4
}

func sourcesLine(ctx *common.Context, srcs []telemetry.SourceStatus, width int) string {
	r := &ctx.Styles.Normal
	g := ctx.Glyphs
	if len(srcs) == 0 {
		return r.Faint.S(common.Fit(" sources: none reported yet", width, g.Ellipsis))
	}
	ordered := slices.Clone(srcs)
	slices.SortStableFunc(ordered, func(a, b telemetry.SourceStatus) int { return sourceRank(a) - sourceRank(b) })
	lead := seg{" sources:", r.Faint}
	full := []seg{lead}
	for _, s := range ordered {
		full = append(full, sourceSeg(ctx, s, false, 0))
	}
	if line, w := join(full, " ", r.Text); w <= width {
		return line
	}
	// Too long: errors without their full text (e shows it), as many
	// sources as fit, and how many more there are; then the room left
	// goes back to the shown sources' full text or longer caveats.
	var shown []telemetry.SourceStatus
	segs := []seg{lead}
	used := common.Width(lead.text)
	shared := sharedHost(ordered)
	trouble := slices.ContainsFunc(ordered, telemetry.SourceStatus.Troubled)
	tail := ""
	for i, s := range ordered {
		if shared != "" {
			s.Name = strings.TrimPrefix(common.Safe(s.Name), shared)
		}
		sg := sourceSeg(ctx, s, true, maxShortCaveat)
		rest := moreText(g.More, len(ordered)-i-1, trouble)
		if used+1+common.Width(sg.text)+common.Width(rest) <= width {
			segs, shown = append(segs, sg), append(shown, s)
			used += 1 + common.Width(sg.text)
			tail = rest
			continue
		}
		tail = moreText(g.More, len(ordered)-i, trouble)
		if i == 0 { // the first always shows, cut to leave room for the count
			tail = moreText(g.More, len(ordered)-i-1, trouble)
			sg.text = common.Fit(sg.text, max(width-used-1-common.Width(tail), 1), g.Ellipsis)
			segs = append(segs, sg)
			shown = nil // nothing to widen
		}
		break
	}
	widen(ctx, segs[1:], shown, width-used-common.Width(tail))
	line, _ := join(segs, " ", r.Text)
	return common.Cut(line+r.Accent.S(tail), width)
}

// widen gives the room a cut sources line has left to its shown sources,
// in order: each its full text where that fits, else (a working source's
// caveat) as much of the caveat as fits, cut after a whole word. segs
// are the shown sources' short segments, replaced in place.
func widen(ctx *common.Context, segs []seg, shown []telemetry.SourceStatus, room int) {
	for i, s := range shown {
		if room <= 0 {
			return
		}
		short := common.Width(segs[i].text)
		if full := sourceSeg(ctx, s, false, 0); common.Width(full.text)-short <= room {
			room -= common.Width(full.text) - short
			segs[i] = full
			continue
		}
		if s.State == telemetry.Live && len(s.Warnings) > 0 {
			// The short caveat may be under maxShortCaveat (cut at a
			// word): shrink the budget by what overshoots until it fits.
			for budget := maxShortCaveat + room; budget > maxShortCaveat; {
				longer := sourceSeg(ctx, s, true, budget)
				over := common.Width(longer.text) - short - room
				if over <= 0 {
					room -= common.Width(longer.text) - short
					segs[i] = longer
					break
				}
				budget -= over
			}
		}
	}
}

// sharedHost is the "host:port/" every source named after an endpoint
// shares, when several are (the table's group line shows it), or "".
func sharedHost(srcs []telemetry.SourceStatus) string {
	prefix, n := "", 0
	for _, s := range srcs {
		p := common.HostPrefix(common.Safe(s.Name))
		switch {
		case p == "":
			continue // a source of another kind ("dcgm"): left as it is
		case prefix != "" && p != prefix:
			return ""
		}
		prefix, n = p, n+1
	}
	if n < 2 {
		return ""
	}
	return prefix
}

// moreText is what ends a cut sources line: how many sources it leaves
// out and, when some source is in trouble, the key that shows it in full
// (the e screen lists only sources in trouble: healthy ones cut from the
// line are not there).
func moreText(more string, n int, trouble bool) string {
	if n <= 0 {
		return ""
	}
	t := " " + more + strconv.Itoa(n) + " more"
	if trouble {
		t += " (e)"
	}
	return t
}

// maxShortCaveat bounds a working source's caveat on a line that cannot
// hold every source (e shows it whole).
const maxShortCaveat = 32

// sourceSeg is one source's health; short leaves out an error's full
// text (its cause stays) and cuts a caveat to caveatWidth cells, for a
// line that cannot hold every source.
func sourceSeg(ctx *common.Context, s telemetry.SourceStatus, short bool, caveatWidth int) seg {
	r := &ctx.Styles.Normal
	g := ctx.Glyphs
	name := common.Safe(s.Name)
	if name == "" {
		name = common.Safe(s.Kind.At(s.URL))
	}
	switch s.State {
	case telemetry.Error:
		if s.Kind == telemetry.SourceNotify {
			// A notifier's Err carries its attempts: "webhook … failing: 405 …".
			return seg{g.BadMark + " " + name + " failing: " + common.Safe(s.Err), r.Bad}
		}
		t := g.BadMark + " " + name + " ERROR"
		if short {
			if cause := rootCause(common.Safe(s.Err)); cause != "" {
				t += " (" + cause + ")"
			}
			return seg{t, r.Bad}
		}
		if s.Err != "" {
			err := common.Safe(s.Err)
			if cause := rootCause(err); cause != "" && len(err)-len(cause) > 16 {
				t += " (" + cause + ")" // the cause first: the line is cut at the right
			}
			t += ": " + err
		}
		if s.Failures > 1 {
			t += " (" + figures.Number(float64(s.Failures)) + " fails)"
		}
		if !s.LastOK.IsZero() {
			t += " last ok " + figures.Age(ctx.Now.Sub(s.LastOK)) + " ago"
		}
		return seg{t, r.Bad}
	case telemetry.Stale:
		t := g.StaleMark + " " + name + " STALE"
		if !s.LastOK.IsZero() {
			t += " " + figures.Age(ctx.Now.Sub(s.LastOK))
		}
		return seg{t, r.Stale}
	case telemetry.NoData:
		return seg{g.StaleMark + " " + name + " no data", r.NoData}
	case telemetry.Live:
		t := g.OKMark + " " + name + " ok"
		if s.Latency > 0 {
			t += " " + figures.Millis(float64(s.Latency)/float64(time.Millisecond))
		}
		if len(s.Warnings) > 0 {
			// "TLS NOT VERIFIED", "lagging 30s": an ok that needs a caveat.
			caveat := common.Safe(strings.Join(s.Warnings, ", "))
			if short {
				caveat = common.CutAtWord(caveat, caveatWidth, g.Ellipsis)
			}
			if caveat == "" {
				// Not even its first word fits: the warn style still says
				// there is one, and e shows it; "()" would say nothing.
				return seg{t, r.Warn}
			}
			return seg{t + " (" + caveat + ")", r.Warn}
		}
		return seg{t, r.OK}
	}
	return seg{g.StaleMark + " " + name + " " + g.Unknown, r.Faint}
}

// rootCause is the last part of a wrapped error ("… dial tcp …: connect:
// connection refused" → "connection refused") when it is short, the part
// an on-call reader needs and the one a cut line loses; "" when the error
// is a single part.
func rootCause(err string) string {
	i := strings.LastIndex(err, ": ")
	if i < 0 {
		return ""
	}
	cause := strings.TrimSpace(err[i+2:])
	if cause == "" || len(cause) > 40 {
		return ""
	}
	return cause
}
