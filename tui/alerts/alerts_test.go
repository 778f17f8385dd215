package alerts

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	_ "github.com/charmbracelet/x/exp/golden" // registers -update for go test ./tui/... -update
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
)

func TestListOrderAndWording(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ctx := &common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(true), Now: now}
	budget := 0.62
	m := New(ctx)
	m.SetSize(140, 6)
	m.SetAlerts([]slo.Alert{
		{Objective: "old", Endpoint: "a", State: slo.Resolved, ActiveAt: now.Add(-time.Hour), ResolvedAt: now.Add(-30 * time.Minute)},
		{Objective: "p", Endpoint: "b", Kind: slo.Percentile, Signal: telemetry.TTFT, State: slo.Pending,
			ActiveAt: now.Add(-10 * time.Second), Value: 0.31, Threshold: 0.3},
		{Objective: "burn", Endpoint: "c", Kind: slo.Ratio, Signal: telemetry.TTFT, State: slo.Firing, Severity: "page",
			ActiveAt: now.Add(-2 * time.Minute), BudgetRemaining: &budget, Value: 20, Threshold: 14.4,
			BurnRates: []slo.BurnRate{{Window: time.Hour, Rate: 20, Factor: 14.4}, {Window: 5 * time.Minute, Rate: 30, Factor: 14.4}}},
		{Objective: "gone", Endpoint: "d", State: slo.Inactive},
	})
	if m.Len() != 2 || m.Counts().Firing != 1 || m.Counts().Pending != 1 {
		t.Fatalf("len %d counts %+v (inactive and old resolved hidden)", m.Len(), m.Counts())
	}
	out := ansi.Strip(m.View())
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(strings.TrimSpace(lines[1]), "FIRING") || !strings.Contains(lines[1], "burn page") ||
		!strings.Contains(lines[1], "burn 20x/30x > 14.4x over 1h/5m budget 62% left") {
		t.Errorf("firing burn-rate line: %q", lines[1])
	}
	if !strings.Contains(lines[2], "PENDING") || !strings.Contains(lines[2], "TTFT 310ms > 300ms") || !strings.Contains(lines[2], "10s") {
		t.Errorf("pending line: %q", lines[2])
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 140 {
			t.Errorf("line too wide: %q", l)
		}
	}
}

// A firing alert whose value is back within its objective says why it
// still fires.
func TestHeldAlertSaysWhy(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ctx := &common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(true), Now: now}
	m := New(ctx)
	m.SetSize(140, 3)
	m.SetAlerts([]slo.Alert{{Objective: "held", Endpoint: "e", Kind: slo.Percentile, Signal: telemetry.TTFT, State: slo.Firing,
		ActiveAt: now.Add(-3 * time.Minute), Value: 0.14, Threshold: 0.15, Peak: 0.19}})
	if out := ansi.Strip(m.View()); !strings.Contains(out, "TTFT 140ms <= 150ms held by keep-firing-for peak 190ms") {
		t.Errorf("held alert:\n%s", out)
	}
}

// The two alerts of one ratio objective (page, ticket) show the objective
// shortened the same way, each with its severity whole, at every width.
func TestObjectiveShortenedAlikeForEachSeverity(t *testing.T) {
	list := []slo.Alert{
		{Objective: "tpot-99pct", Kind: slo.Ratio, Severity: "page"},
		{Objective: "tpot-99pct", Kind: slo.Ratio, Severity: "ticket"},
		{Objective: "ttft-99pct", Kind: slo.Ratio, Severity: "page"},
		{Objective: "ttft-p99-500ms", Kind: slo.Percentile},
	}
	for w := 8; w <= 24; w++ {
		got := shortObjectives(list, w, "…")
		page, ticket := got["tpot-99pct page"], got["tpot-99pct ticket"]
		if !strings.HasSuffix(page, " page") || !strings.HasSuffix(ticket, " ticket") {
			t.Fatalf("width %d: severity not whole: %q, %q", w, page, ticket)
		}
		if p, tk := strings.TrimSuffix(page, " page"), strings.TrimSuffix(ticket, " ticket"); p != tk {
			t.Errorf("width %d: one objective read two ways: %q, %q", w, page, ticket)
		}
		if got["tpot-99pct page"] == got["ttft-99pct page"] {
			t.Errorf("width %d: two objectives read alike: %q", w, page)
		}
		for name, short := range got {
			if common.Width(short) > w && w >= 12 {
				t.Errorf("width %d: %q is %q, wider", w, name, short)
			}
		}
	}
}

// At any width an alert line's reason is whole or cut after a whole
// word, never mid-word (QA5 #14: "unknown sin…" at 80 columns).
func TestReasonCutAtAWord(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ctx := &common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: now}
	const why = "unknown since 11:55:00 (data stale)"
	words := strings.Fields(why)
	for w := 60; w <= 140; w++ {
		m := New(ctx)
		m.SetSize(w, 3)
		m.SetAlerts([]slo.Alert{{Objective: "ttft-p99", Endpoint: "127.0.0.3:18003/qwen-32b", Kind: slo.Percentile, Signal: telemetry.TTFT,
			State: slo.Pending, ActiveAt: now.Add(-time.Minute), UnknownSince: now.Add(-5 * time.Minute), Threshold: 0.05,
			Data: telemetry.Stale}})
		line := strings.Split(ansi.Strip(m.View()), "\n")[1]
		if ansi.StringWidth(line) > w {
			t.Errorf("%d cols: %q too wide", w, line)
		}
		i := strings.Index(line, "· unknown")
		if i < 0 {
			continue // no room for the reason at all
		}
		shown := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line[i+len("· "):]), "…"))
		for j, word := range shown {
			if j >= len(words) || word != words[j] {
				t.Errorf("%d cols: reason %q cut inside %q", w, strings.Join(shown, " "), why)
				break
			}
		}
	}
}

// The parenthesis after "unknown since" says what is true of the data:
// none yet, old, or failing (QA L2: "data stale or failing" on a PromQL
// source that answered with nothing yet).
func TestUnknownSinceSaysWhichDataTrouble(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ctx := &common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: now}
	for _, c := range []struct {
		state slo.State
		data  telemetry.State
		count float64
		want  string
	}{
		{slo.NoDataState, telemetry.NoData, 0, "(source answered, no data yet)"},
		{slo.NoDataState, telemetry.NoData, 12, "(source answered with no data)"},
		{slo.NoDataState, telemetry.Unknown, 0, "(no data yet)"},
		{slo.UnknownState, telemetry.Stale, 12, "(data stale)"},
		{slo.Firing, telemetry.Error, 12, "(source failing)"},
	} {
		m := New(ctx)
		m.SetSize(200, 3)
		a := slo.Alert{Objective: "ttft-p95", Endpoint: "prom/qwen", Kind: slo.Percentile, Signal: telemetry.TTFT,
			State: c.state, Data: c.data, Count: c.count, UnknownSince: now.Add(-7 * time.Second), Threshold: 5, Value: 0.2}
		if c.state == slo.Firing {
			a.ActiveAt, a.Value = now.Add(-time.Minute), 6
		}
		m.SetAlerts([]slo.Alert{a})
		line := strings.Split(ansi.Strip(m.View()), "\n")[1]
		if !strings.Contains(line, "unknown since 11:59:53 "+c.want) {
			t.Errorf("%s, data %v, count %v: %q, want %q", c.state, c.data, c.count, line, c.want)
		}
	}
}

// An unknown row after a resolved episode dates from when its data went
// missing, with no peak: the episode is the RESOLVED row's (QA M3).
func TestUnknownRowDatesFromUnknownSince(t *testing.T) {
	now := time.Date(2026, 1, 1, 3, 4, 22, 0, time.UTC)
	ctx := &common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: now}
	m := New(ctx)
	m.SetSize(160, 4)
	m.SetAlerts([]slo.Alert{
		{Objective: "availability", Endpoint: "127.0.0.1:18000/qa-8b", Kind: slo.Availability, Signal: telemetry.ErrorRate,
			State: slo.UnknownState, Data: telemetry.Stale, UnknownSince: now.Add(-7 * time.Second), Value: 0.5, Threshold: 0.5, Count: 30},
		{Objective: "availability", Endpoint: "127.0.0.1:18000/qa-8b", Kind: slo.Availability, Signal: telemetry.ErrorRate,
			State: slo.Resolved, ActiveAt: now.Add(-156 * time.Second), ResolvedAt: now.Add(-89 * time.Second), Value: 0.5, Threshold: 0.5, Peak: 1},
	})
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	unknown := lines[1]
	if !strings.HasPrefix(strings.TrimSpace(unknown), "UNKNOWN") || !strings.Contains(unknown, "since 03:04:15 7s ") {
		t.Errorf("unknown row %q: want since 03:04:15, 7s", unknown)
	}
	if strings.Contains(unknown, "peak") {
		t.Errorf("unknown row %q shows a peak", unknown)
	}
	if !strings.Contains(lines[2], "ended 03:02:53 1m07s") {
		t.Errorf("resolved row %q", lines[2])
	}
}

// An objective whose signal the endpoint can never give reads N/A with the
// reason from the start — not "no data yet", nothing to wait for — listed
// after the rows that need a look and counted as no trouble.
func TestUnmeasurableSaysWhyFromTheStart(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ctx := &common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: now}
	m := New(ctx)
	m.SetSize(160, 4)
	m.SetAlerts([]slo.Alert{
		{Objective: "ttft-p95", Endpoint: "tgi:8080/bloom", Kind: slo.Percentile, Signal: telemetry.TTFT, State: slo.Unmeasurable,
			Data: telemetry.Unknown, Threshold: 5, EvaluatedAt: now, Reason: "unmeasurable: TGI exposes no TTFT histogram"},
		{Objective: "tpot-p95", Endpoint: "tgi:8080/bloom", Kind: slo.Percentile, Signal: telemetry.TPOT, State: slo.NoDataState,
			Data: telemetry.NoData, Threshold: 0.05, EvaluatedAt: now, UnknownSince: now.Add(-time.Second)},
	})
	if m.Len() != 2 || m.Counts() != (Counts{NoData: 1}) {
		t.Fatalf("len %d counts %+v: the unmeasurable row is listed, not counted", m.Len(), m.Counts())
	}
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	row := lines[2]
	if !strings.HasPrefix(strings.TrimSpace(row), "N/A") || !strings.Contains(row, "TTFT — vs 5s") ||
		!strings.Contains(row, "unmeasurable: TGI exposes no TTFT histogram") || strings.Contains(row, "no data") {
		t.Errorf("unmeasurable row %q (rows:\n%s)", row, strings.Join(lines, "\n"))
	}
	if !strings.Contains(lines[1], "tpot-p95") {
		t.Errorf("no-data row first: %q", lines[1])
	}
}

// A target_up alert reads the way round it breaches: below all up.
func TestTargetUpAlertLine(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "target down (up 0%)"}, {0.5, "up 50% < 100%"}, {1, "up 100%"}} {
		a := slo.Alert{Kind: slo.TargetUp, Signal: telemetry.TargetUp, State: slo.Firing, Value: c.v, Threshold: 1, Count: 1}
		if got := valueVsObjective(a, themes.Glyphs{}); got != c.want {
			t.Errorf("value %v: %q, want %q", c.v, got, c.want)
		}
	}
}
