package header

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/alerts"
	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/format"
)

func ctx() *common.Context {
	return &common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(true), Now: time.Unix(1e9, 0),
		Window: 5 * time.Minute, Refresh: time.Second}
}

// With nothing firing the header is calm only when every source works: a
// failing source may be why nothing fires. A working source's caveats
// (TLS not verified, a lagging store) are shown with it.
func TestHeaderNeverCalmWhileASourceFails(t *testing.T) {
	ok := telemetry.SourceStatus{Name: "probe a", State: telemetry.Live}
	bad := telemetry.SourceStatus{Name: "probe b", State: telemetry.Error, Err: "connect: connection refused"}
	calm := ansi.Strip(View(ctx(), Info{Sources: []telemetry.SourceStatus{ok}, Alerts: alerts.Counts{}}, 160))
	if !strings.Contains(calm, "alerts: none firing") {
		t.Errorf("healthy header: %q", calm)
	}
	failing := ansi.Strip(View(ctx(), Info{Sources: []telemetry.SourceStatus{ok, bad}, Alerts: alerts.Counts{}}, 160))
	if strings.Contains(failing, "alerts: none firing") || !strings.Contains(failing, "1 source FAILING") {
		t.Errorf("header while a source fails: %q", failing)
	}
	warn := telemetry.SourceStatus{Name: "prom", State: telemetry.Live, Warnings: []string{"TLS NOT VERIFIED"}}
	if got := ansi.Strip(View(ctx(), Info{Sources: []telemetry.SourceStatus{warn}}, 160)); !strings.Contains(got, "prom ok (TLS NOT VERIFIED)") {
		t.Errorf("warnings not shown: %q", got)
	}
}

func TestRecBadge(t *testing.T) {
	got := ansi.Strip(View(ctx(), Info{Title: "ttftop", Recording: "/var/tmp/incident.jsonl.gz"}, 120))
	if !strings.Contains(got, "REC incident.jsonl.gz") {
		t.Errorf("no REC badge: %q", got)
	}
}

func TestNotifierFailingSaid(t *testing.T) {
	n := telemetry.SourceStatus{Name: "webhook http://am:9093/api/v2/alerts", Kind: "notify", State: telemetry.Error,
		Err: "HTTP 405 Method Not Allowed (attempt 2 of 4, retrying in 2s)", Failures: 2}
	got := ansi.Strip(View(ctx(), Info{Sources: []telemetry.SourceStatus{n}}, 200))
	if !strings.Contains(got, "webhook http://am:9093/api/v2/alerts failing: HTTP 405 Method Not Allowed (attempt 2 of 4") ||
		!strings.Contains(got, "1 notifier failing") {
		t.Errorf("header: %q", got)
	}
}

// A notifier that gave up is counted in the header beside what fires, and
// leads the sources line however many probes fail before it; a line too
// long for every source ends saying how many more e lists.
func TestNotifierFailingLeadsAndCounts(t *testing.T) {
	srcs := []telemetry.SourceStatus{{Name: "probe a", State: telemetry.Live, Latency: 300 * time.Millisecond}}
	for _, n := range []string{"b", "c", "d"} {
		srcs = append(srcs, telemetry.SourceStatus{Name: "probe 127.0.0.1:40677/" + n, Kind: "probe", State: telemetry.Error, Failures: 7,
			Err: "Post \"http://127.0.0.1:40677/v1/chat/completions\": dial tcp 127.0.0.1:40677: connect: connection refused"})
	}
	srcs = append(srcs, telemetry.SourceStatus{Name: "webhook http://127.0.0.1:9093/api/v2/alerts", Kind: "notify", State: telemetry.Error,
		Err: "HTTP 405 Method Not Allowed (gave up after 4 attempts; 3 undelivered)"})
	for _, w := range []int{80, 160, 240} {
		lines := strings.Split(ansi.Strip(View(ctx(), Info{Sources: srcs, Alerts: alerts.Counts{Firing: 2}}, w)), "\n")
		if !strings.Contains(lines[0], "2 FIRING") || !strings.Contains(lines[0], "1 notifier failing") {
			t.Errorf("width %d: header does not count the notifier: %q", w, lines[0])
		}
		if !strings.HasPrefix(lines[1], " sources: x webhook http://127.0.0.1:9093/api/v2/alerts failing") && w >= 160 {
			t.Errorf("width %d: the notifier does not lead the sources line: %q", w, lines[1])
		}
		if !strings.HasPrefix(lines[1], " sources: x webhook") {
			t.Errorf("width %d: the notifier does not lead the sources line: %q", w, lines[1])
		}
		if !strings.HasSuffix(lines[1], " more (e)") {
			t.Errorf("width %d: cut line does not say how many more: %q", w, lines[1])
		}
		for i, l := range lines {
			if cells := ansi.StringWidth(l); cells > w {
				t.Errorf("width %d: line %d has %d cells", w, i, cells)
			}
		}
	}
	// Room for all: nothing is left out, so no count.
	wide := strings.Split(ansi.Strip(View(ctx(), Info{Sources: srcs[:2]}, 400)), "\n")[1]
	if strings.Contains(wide, "more (e)") || !strings.Contains(wide, "connection refused") {
		t.Errorf("wide line: %q", wide)
	}
}

// sixWorkingProbes are more working sources than an 80-column line shows.
func sixWorkingProbes() []telemetry.SourceStatus {
	var srcs []telemetry.SourceStatus
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		srcs = append(srcs, telemetry.SourceStatus{Name: "probe 127.0.0.1:40677/meta-llama/Llama-3.1-8B-Instruct-" + n, Kind: "probe",
			State: telemetry.Live, Latency: 300 * time.Millisecond})
	}
	return srcs
}

// A cut line offers e only when some source is in trouble: the e screen
// lists no healthy source.
func TestMoreOffersEOnlyForTrouble(t *testing.T) {
	srcs := sixWorkingProbes()
	line := strings.Split(ansi.Strip(View(ctx(), Info{Sources: srcs}, 80)), "\n")[1]
	if !strings.Contains(line, " more") || strings.Contains(line, "(e)") {
		t.Errorf("healthy sources cut: %q, want a count without e", line)
	}
	srcs[5].State, srcs[5].Err = telemetry.Stale, "no update" // listed last, shown first (trouble leads)
	line = strings.Split(ansi.Strip(View(ctx(), Info{Sources: srcs}, 80)), "\n")[1]
	if !strings.Contains(line, "STALE") || !strings.HasSuffix(line, " more (e)") {
		t.Errorf("a stale source: %q, want e offered", line)
	}
}

func TestReadOnlyBadge(t *testing.T) {
	got := ansi.Strip(View(ctx(), Info{Title: "ttftop", Viewers: 3}, 120))
	if !strings.Contains(got, "READ-ONLY · 3 viewers") {
		t.Errorf("no read-only badge: %q", got)
	}
}

func TestReplayEndedSaid(t *testing.T) {
	c := ctx()
	rp := &Replay{Speed: 1, First: c.Now.Add(-time.Minute), Last: c.Now, Ended: true}
	if got := ansi.Strip(View(c, Info{Title: "ttftop", Replay: rp}, 160)); !strings.Contains(got, "(ended: the recording's last moment) 01:00/01:00") {
		t.Errorf("replay end not said: %q", got)
	}
}

// A recording cut by a killed recorder says so at its end, not as a
// recording's proper last moment.
func TestReplayCutSaid(t *testing.T) {
	c := ctx()
	rp := &Replay{Speed: 1, First: c.Now.Add(-time.Minute), Last: c.Now, Ended: true, Cut: true}
	got := ansi.Strip(View(c, Info{Title: "ttftop", Replay: rp}, 200))
	if !strings.Contains(got, "(ended: the recording is cut here, its recorder killed or crashed)") || strings.Contains(got, "last moment") {
		t.Errorf("header %q: want the cut said", got)
	}
}

func TestRootCauseFirst(t *testing.T) {
	for _, c := range []struct{ err, want string }{
		{`connect: cannot reach 127.0.0.4:18104 to list its models: Get "http://127.0.0.4:18104/v1/models": dial tcp 127.0.0.4:18104: connect: connection refused`, "connection refused"},
		{"timeout", ""},
		{"status 503: " + strings.Repeat("x", 60), ""},
	} {
		if got := rootCause(c.err); got != c.want {
			t.Errorf("rootCause(%q) = %q, want %q", c.err, got, c.want)
		}
	}
}

// One endpoint is said in the singular.
func TestOneEndpoint(t *testing.T) {
	if got := ansi.Strip(View(ctx(), Info{Shown: 1, Total: 1}, 120)); !strings.Contains(got, " 1 endpoint ") {
		t.Errorf("header %q", got)
	}
}

// The header counts serving endpoints, and models when replicas are
// summed into model rows; a filter shows shown/total of each.
func TestHeaderCounts(t *testing.T) {
	for _, c := range []struct {
		in   Info
		want string
	}{
		{Info{Shown: 1, Total: 1}, "1 endpoint |"},
		{Info{Shown: 2, Total: 5}, "2/5 endpoints |"},
		{Info{Shown: 5, Total: 5, ModelsShown: 4, Models: 4}, "4 models | 5 endpoints |"},
		{Info{Shown: 1, Total: 5, ModelsShown: 0, Models: 4}, "0/4 models | 1/5 endpoints |"},
		{Info{Shown: 1, Total: 1, ModelsShown: 1, Models: 1}, "1 model | 1 endpoint |"},
	} {
		if got := ansi.Strip(View(ctx(), c.in, 160)); !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.in, got, c.want)
		}
	}
}

// A line too long for every source drops the host:port the endpoints'
// sources share and shortens a caveat at a word, so more sources show.
func TestCutSourcesLineDropsSharedHost(t *testing.T) {
	var srcs []telemetry.SourceStatus
	for _, m := range []string{"Qwen/Qwen2.5-14B-Instruct", "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "meta-llama/Llama-3.2-3B-Instruct"} {
		srcs = append(srcs, telemetry.SourceStatus{Name: "127.0.0.1:43799/" + m, State: telemetry.Live, Latency: time.Second})
	}
	srcs[0].Warnings = []string{"53 of 95 event gaps are under 1 ms: buffered path (proxy buffering or batched flushes)?"}
	srcs = append(srcs, telemetry.SourceStatus{Name: "dcgm", State: telemetry.Live})
	got := strings.Split(ansi.Strip(View(ctx(), Info{Sources: srcs}, 200)), "\n")[1]
	// The room left after every source is placed goes to the caveat, cut
	// after a whole word.
	if strings.Contains(got, "127.0.0.1:43799/") || !strings.Contains(got, "o Qwen/Qwen2.5-14B-Instruct ok 1s (53 of 95 event gaps are under 1 ms: buffered path.)") ||
		!strings.Contains(got, "meta-llama/Llama-3.2-3B-Instruct ok") || !strings.Contains(got, "dcgm ok") || ansi.StringWidth(got) > 200 {
		t.Errorf("cut line: %q", got)
	}
}

// A caveat too long for the line uses the room there is, cut after a
// whole word, not 32 cells of it with 90 free (QA5 #10: "(gpu_mem_bw: no
// GPU series…)" at 160 columns read as "no GPU series" while DRAM% showed).
func TestSourcesCaveatUsesTheRoom(t *testing.T) {
	warn := "gpu_mem_bw: no GPU series shares a pod or host with 127.0.0.3:18003/qwen-32b: no GPU figure there " +
		"(DCGM series carry Hostname, pod or instance labels matching the engine's; see docs/engines.md)"
	srcs := []telemetry.SourceStatus{{Name: "prometheus", State: telemetry.Live, Latency: 21 * time.Millisecond, Warnings: []string{warn}}}
	for _, width := range []int{160, 100} {
		got := strings.Split(ansi.Strip(View(ctx(), Info{Sources: srcs}, width)), "\n")[1]
		if w := ansi.StringWidth(got); w > width || w < width-24 {
			t.Errorf("%d columns: line %d wide: %q", width, w, got)
		}
		if !strings.HasPrefix(got, " sources: o prometheus ok 21ms (gpu_mem_bw: no GPU series shares a pod or host with") || !strings.HasSuffix(got, "….)") && !strings.HasSuffix(got, ".)") {
			t.Errorf("%d columns: %q", width, got)
		}
		// Cut after a whole word of the warning.
		body := strings.TrimSuffix(strings.TrimPrefix(got, " sources: o prometheus ok 21ms ("), ".)")
		body = strings.TrimSuffix(body, "…)")
		if !strings.HasPrefix(warn, body) || (len(body) < len(warn) && !strings.ContainsRune(" ,;:", rune(warn[len(body)]))) {
			t.Errorf("%d columns: caveat %q not cut at a word of %q", width, body, warn)
		}
	}
}

// Review: a caveat whose first word does not fit its room was cut to ""
// and still shown in parentheses: "prom ok ()".
func TestCaveatCutToNothingLeavesNoParentheses(t *testing.T) {
	c := ctx()
	s := telemetry.SourceStatus{Name: "prom", State: telemetry.Live, Warnings: []string{"lagging-behind-the-store 30s"}}
	got := sourceSeg(c, s, true, 8)
	if want := c.Glyphs.OKMark + " prom ok"; got.text != want {
		t.Errorf("short segment %q, want %q", got.text, want)
	}
	if got := sourceSeg(c, s, true, 40); !strings.HasSuffix(got.text, "prom ok (lagging-behind-the-store 30s)") {
		t.Errorf("caveat with room: %q", got.text)
	}
}

// In --ascii each mark means one thing: o a working source, "and N more"
// the sources a cut line leaves out, + only a rate that reads low
// (format.YoungMark) and the borders' corners.
func TestASCIIMarksEachMeanOneThing(t *testing.T) {
	srcs := sixWorkingProbes()
	line := strings.Split(ansi.Strip(View(ctx(), Info{Sources: srcs}, 80)), "\n")[1]
	if strings.Contains(line, format.YoungMark) || !strings.Contains(line, " o meta-llama") ||
		!regexp.MustCompile(` and \d+ more$`).MatchString(line) {
		t.Errorf("ascii sources line: %q; want o for ok, 'and N more', no %s", line, format.YoungMark)
	}
	g := themes.NewGlyphs(true)
	marks := map[string]string{"ok": g.OKMark, "bad": g.BadMark, "stale": g.StaleMark, "reads low": format.YoungMark,
		"more": strings.TrimSpace(g.More)}
	seen := map[string]string{}
	for meaning, m := range marks {
		if other, dup := seen[m]; dup {
			t.Errorf("ascii %q means both %s and %s", m, meaning, other)
		}
		seen[m] = meaning
	}
	// The Unicode set keeps its ● and +N more.
	uni := &common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Unix(1e9, 0)}
	if line := strings.Split(ansi.Strip(View(uni, Info{Sources: srcs}, 80)), "\n")[1]; !regexp.MustCompile(`● meta-llama.* \+\d+ more$`).MatchString(line) {
		t.Errorf("unicode sources line: %q", line)
	}
}
