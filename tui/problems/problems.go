// Package problems is the `e` screen: every failing or lagging source and
// every failing figure with its full message, wrapped (a table cell only
// has room for "ERROR", the header line for the start of a reason), and a
// hint that matches the failure. Mouse capture can be turned off (`m`) so
// the text can be selected and copied.
package problems

import (
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/why"
)

// Model is the problems screen.
type Model struct {
	ctx  *common.Context
	snap telemetry.Snapshot
	// Scroller gives Scroll, Page, Home and End.
	common.Scroller
	width  int
	height int
	// causes is each unwell endpoint's diagnosis, by name.
	causes map[string]diagnosis.Diagnosis
}

// SetCauses gives the diagnoses that name a cause.
func (m *Model) SetCauses(c map[string]diagnosis.Diagnosis) { m.causes = c }

// New returns the screen.
func New(ctx *common.Context) Model { return Model{ctx: ctx} }

// SetSize sets the box.
func (m *Model) SetSize(w, h int) { m.width, m.height = max(w, 0), max(h, 0) }

// SetData gives the latest snapshot.
func (m *Model) SetData(s telemetry.Snapshot) { m.snap = s }

// Count is how many problems there are (for the footer and header).
func (m *Model) Count() int {
	return len(sourceProblems(m.snap)) + len(targetProblems(m.snap)) + len(figureProblems(m.snap))
}

// View renders exactly height lines.
func (m *Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	m.Scroller.SetLines(common.Lines(m.render(), m.width))
	m.Scroller.SetHeight(m.height)
	return m.Scroller.View(m.width, m.ctx.Styles.Normal.Faint)
}

func (m *Model) render() string {
	st := m.ctx.Styles
	r := &st.Normal
	w := max(m.width-4, 20)
	var out []string
	para := func(paint func(string) string, s string) {
		for _, l := range strings.Split(ansi.Wordwrap(s, w, " /"), "\n") {
			out = append(out, "    "+paint(l))
		}
	}
	// Why endpoints are unwell comes first: what an on-call engineer
	// opened the screen for.
	if len(m.causes) > 0 {
		out = append(out, st.Title.S(" why endpoints are unwell"))
		names := slices.Sorted(maps.Keys(m.causes))
		for _, name := range names {
			out = append(out, r.Text.S("  "+common.Safe(name)))
			out = append(out, why.Lines(m.ctx, m.causes[name], "    ", m.width)...)
		}
		out = append(out, "")
	}
	srcs := sourceProblems(m.snap)
	out = append(out, st.Title.S(" sources"))
	if len(srcs) == 0 {
		out = append(out, r.OK.S("  every source answers"))
	}
	for _, s := range srcs {
		head := "  " + sourceName(s) + " " + strings.ToUpper(s.State.String())
		if s.Failures > 0 {
			head += " · " + figures.Number(float64(s.Failures)) + " failures in a row"
		}
		if !s.LastOK.IsZero() {
			head += " · last ok " + figures.Age(m.ctx.Now.Sub(s.LastOK)) + " ago"
		}
		out = append(out, r.Bad.S(head))
		if s.Err != "" {
			para(r.Text.S, common.Safe(s.Err))
		}
		for _, warn := range s.Warnings {
			para(r.Warn.S, common.Safe(warn))
		}
		if h := Hint(s.Err, s.URL); h != "" {
			para(r.Accent.S, "hint: "+h)
		}
	}
	// What every source is, troubled or not: a PromQL store says what
	// of its figures is backfilled history and what is live since when.
	if described := describedSources(m.snap); len(described) > 0 {
		out = append(out, "", st.Title.S(" what the sources are"))
		for _, s := range described {
			out = append(out, "  "+r.Text.S(sourceName(s)+" "+s.State.String()))
			para(r.Faint.S, common.Safe(s.Description))
		}
	}
	if targets := targetProblems(m.snap); len(targets) > 0 {
		out = append(out, "", st.Title.S(" targets down or gone"))
		for _, t := range targets {
			head := "  " + common.Safe(t.ep.Name) + " " + strings.ToUpper(t.h.State) + " since " + common.Clock(t.h.Since.In(m.ctx.Now.Location())) +
				" (" + figures.Age(m.ctx.Now.Sub(t.h.Since)) + ")"
			paint := r.Bad.S
			if t.h.State == telemetry.TargetGone {
				paint = r.Stale.S
			}
			out = append(out, paint(head))
			para(r.Text.S, common.Safe(t.h.Reason))
			if h := Hint(t.h.Reason, t.ep.BaseURL); h != "" {
				para(r.Accent.S, "hint: "+h)
			}
		}
	}
	figs := figureProblems(m.snap)
	out = append(out, "", st.Title.S(" failing figures"))
	if len(figs) == 0 {
		out = append(out, r.OK.S("  none"))
	}
	for _, f := range figs {
		out = append(out, r.Bad.S("  "+common.Safe(f.endpoint)+" "+f.signal.Info().Title+" ERROR")+r.Faint.S(" · "+common.Safe(f.snap.Source)))
		para(r.Text.S, common.Safe(f.snap.Err))
		if h := Hint(f.snap.Err, f.url); h != "" {
			para(r.Accent.S, "hint: "+h)
		}
	}
	out = append(out, "", r.Faint.S(" m toggles mouse capture, so this text can be selected and copied · esc back"))
	return strings.Join(out, "\n")
}

// sourceProblems are the sources that fail, are stale or carry warnings.
func sourceProblems(s telemetry.Snapshot) []telemetry.SourceStatus {
	var out []telemetry.SourceStatus
	for _, src := range s.Sources {
		if src.Troubled() {
			out = append(out, src)
		}
	}
	return out
}

// describedSources are the sources that say what they are.
func describedSources(s telemetry.Snapshot) []telemetry.SourceStatus {
	var out []telemetry.SourceStatus
	for _, src := range s.Sources {
		if src.Description != "" {
			out = append(out, src)
		}
	}
	return out
}

// sourceName is how the screen names a source: its name, else kind and URL.
func sourceName(s telemetry.SourceStatus) string {
	if name := common.Safe(s.Name); name != "" {
		return name
	}
	return common.Safe(string(s.Kind) + " " + s.URL)
}

type target struct {
	ep telemetry.EndpointSnapshot
	h  telemetry.TargetHealth
}

// targetProblems are the endpoints whose scrape target is down or gone.
func targetProblems(s telemetry.Snapshot) []target {
	var out []target
	for _, ep := range s.Endpoints {
		if h, ok := ep.Target(); ok {
			out = append(out, target{ep: ep, h: h})
		}
	}
	return out
}

type figure struct {
	endpoint, url string
	signal        telemetry.Signal
	snap          telemetry.SignalSnapshot
}

// figureProblems are the failing figures, one per endpoint and message
// (a failed probe fails every probe figure with one reason).
func figureProblems(s telemetry.Snapshot) []figure {
	var out []figure
	for _, ep := range s.Endpoints {
		seen := map[string]bool{}
		for _, sig := range telemetry.Signals {
			v, ok := ep.Signals[sig]
			if !ok || v.State != telemetry.Error || seen[v.Source+"\x00"+v.Err] {
				continue
			}
			seen[v.Source+"\x00"+v.Err] = true
			out = append(out, figure{endpoint: ep.Name, url: ep.BaseURL, signal: sig, snap: v})
		}
	}
	return out
}

// Hint says what a failure usually means and what to try, from the
// message's words; "" when there is nothing better than the message.
func Hint(msg, target string) string {
	host := target
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		host = u.Host
	}
	m := strings.ToLower(msg)
	where := ""
	if host != "" {
		where = " on " + host
	}
	switch {
	case strings.Contains(m, "connection refused"):
		return "nothing listens there: is the server running" + where + ", on that port?"
	case strings.Contains(m, "no such host"), strings.Contains(m, "server misbehaving"):
		return "the host name does not resolve: check the URL's host"
	case strings.Contains(m, "x509"), strings.Contains(m, "certificate"):
		return "TLS verification failed: give the server's CA with --ca-file (--insecure skips verification, and says so)"
	case strings.Contains(m, "401"), strings.Contains(m, "403"), strings.Contains(m, "unauthorized"), strings.Contains(m, "forbidden"):
		return "authentication refused: check --api-key-env / --api-key-file (or the config's bearer_token_*)"
	case strings.Contains(m, "405"):
		return "the URL does not take this method: an Alertmanager webhook is POSTed to /api/v2/alerts"
	case strings.Contains(m, "404"):
		return "no such path: check the URL's path, or name the protocol with --api"
	case strings.Contains(m, "429"), strings.Contains(m, "rate limit"):
		return "rate limited: probe less often (--interval) or raise the server's limit"
	case strings.Contains(m, "503"), strings.Contains(m, "unavailable"):
		return "the server says it is unavailable: overloaded, starting, or in an outage"
	case strings.Contains(m, "no response headers"):
		return "the server took the request but sent no response headers: it is hung, stopped, or queueing without answering"
	case strings.Contains(m, "stall"):
		return "the stream stopped mid-answer: the engine may be stuck or preempting"
	case strings.Contains(m, "timeout"), strings.Contains(m, "deadline"):
		return "no answer in time: the server may be stalled or overloaded (--timeout sets the limit)"
	case strings.Contains(m, "lagging"):
		return "the store answers late: figures arrive with its ingestion delay"
	}
	return ""
}
