package detail

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ttftop/ttftop/telemetry"
)

// The engine section lists the diagnosis signals the engine reports,
// each with its figure, state and source; absent ones are left out, and
// MBU says whether it is measured or estimated.
func TestEngineSection(t *testing.T) {
	in := baseInput()
	in.h = 80
	in.ep.Signals[telemetry.QueueTime] = scrapedLive(telemetry.SignalSnapshot{Unit: "ms", P50: f(12), P90: f(30), P95: f(41), P99: f(80), Count: 200})
	in.ep.Signals[telemetry.Preemptions] = scrapedLive(telemetry.SignalSnapshot{Unit: "/s", Value: f(0.5)})
	in.ep.Signals[telemetry.PrefixCacheHit] = scrapedLive(telemetry.SignalSnapshot{Unit: "%", Value: f(37.5)})
	stale := scrapedLive(telemetry.SignalSnapshot{Unit: "tok/step", Value: f(2.2)})
	stale.State, stale.ObservedAt = telemetry.Stale, t0.Add(-time.Minute)
	in.ep.Signals[telemetry.SpecAcceptLen] = stale
	in.ep.Signals[telemetry.MBU] = scrapedLive(telemetry.SignalSnapshot{Unit: "%", Value: f(48)})
	m := New(ctxFor("default", t0))
	out := ansi.Strip(show(&m, in))
	for _, want := range []string{
		" engine server figures over 5m",
		"queue        p50 12ms p95 41ms p99 80ms n=200",
		"preemptions  0.5/s",
		"prefix hit   38%",
		"accept len   2.2tok/step 1m ago", // stale: its age, never a fresh-looking figure
		"MBU (engine)",
		"MBU = engine-counted bytes read",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	for _, absent := range []string{"prefill ", "spec accept", "read BW"} {
		if strings.Contains(out, absent) {
			t.Errorf("%q shown without the signal", absent)
		}
	}

	s := in.ep.Signals[telemetry.MBU]
	s.Approx = true
	in.ep.Signals[telemetry.MBU] = s
	m = New(ctxFor("default", t0))
	if out := ansi.Strip(show(&m, in)); !strings.Contains(out, "MBU (est.)") || !strings.Contains(out, "~48%") {
		t.Errorf("estimated MBU not marked:\n%s", out)
	}

	in = baseInput()
	m = New(ctxFor("default", t0))
	if out := ansi.Strip(show(&m, in)); strings.Contains(out, " engine server figures") {
		t.Error("engine section without any engine signal")
	}
}

// The engine heading names the rate window its rates and ratios are
// really taken over (PromQL's window, not the viewed one nor the refresh);
// a figure from another span says its own. The young mark "+" goes where
// the store put it (counters' rates), with the words in the summary.
func TestEngineSectionRateWindow(t *testing.T) {
	in := baseInput()
	in.h = 80
	rated := func(v float64, unit, src string, window float64, young bool) telemetry.SignalSnapshot {
		s := telemetry.SignalSnapshot{Unit: unit, Value: f(v), State: telemetry.Live, ObservedAt: t0, Source: src, RateWindowS: window}
		if young {
			s.Young, s.SeriesAgeS = true, 120
		}
		return s
	}
	const prom, scrape = "promql:http://prom:9090", "scrape:http://gpu-a:8000/metrics"
	in.ep.Signals[telemetry.RequestRate] = rated(1.41, "req/s", prom, 300, true)
	in.ep.Signals[telemetry.PrefixCacheHit] = rated(37.5, "%", prom, 300, false)
	in.ep.Signals[telemetry.Preemptions] = rated(0.5, "/s", scrape, 1, false)
	in.ep.Signals[telemetry.OutputTPS] = rated(288, "tok/s", prom, 300, true)
	ctx := ctxFor("default", t0)
	ctx.Window = time.Minute
	m := New(ctx)
	out := ansi.Strip(show(&m, in))
	for _, want := range []string{
		" engine server figures over 1m; rates and ratios over 5m, PromQL window; + series 2m old: rate reads low",
		"requests     1.41req/s+ ",
		"prefix hit   38% ",
		"preemptions  0.5/s over 1s, scrape window",
		"tok/s 288+ (rate over 5m, PromQL window; series 2m old: rate reads low)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	for _, wrong := range []string{"last refresh interval", "38%+"} {
		if strings.Contains(out, wrong) {
			t.Errorf("%q shown in\n%s", wrong, out)
		}
	}
}

// GPUs shared with other endpoints (several models on one host): power
// and J/token say they are the host's, and a note says by how many and
// what J/token divides by; GPUs of its own show neither.
func TestGPUSectionSharedHost(t *testing.T) {
	in := baseInput()
	in.h = 80
	share := &telemetry.GPUShare{Scope: "host", By: 3, Endpoints: []string{"a", "b", "c"}}
	in.ep.Signals[telemetry.GPUPower] = telemetry.SignalSnapshot{Unit: "W", Value: f(900), State: telemetry.Live, ObservedAt: t0, Source: "promql:x", Shared: share}
	in.ep.Signals[telemetry.EnergyPerToken] = telemetry.SignalSnapshot{Unit: "J/tok", Value: f(1.4), State: telemetry.Live, ObservedAt: t0,
		Source: "derived: promql:x ÷ output tokens of the 3 endpoints sharing its GPUs", Shared: share}
	m := New(ctxFor("default", t0))
	out := ansi.Strip(show(&m, in))
	for _, want := range []string{"power (host)", "J/token (host)", "host's GPUs, shared by 3 endpoints", "J/token = their energy / all 3's tokens"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	for _, sig := range []telemetry.Signal{telemetry.GPUPower, telemetry.EnergyPerToken} {
		s := in.ep.Signals[sig]
		s.Shared = nil
		in.ep.Signals[sig] = s
	}
	m = New(ctxFor("default", t0))
	out = ansi.Strip(show(&m, in))
	if strings.Contains(out, "(host)") || strings.Contains(out, "shared by") || !strings.Contains(out, "J/token (srv)") {
		t.Errorf("own GPUs shown as shared:\n%s", out)
	}
}

// A definition longer than the room beside its figure wraps under
// itself: every word is there, no line is wider than the view.
func TestEngineDefinitionsWrap(t *testing.T) {
	def := strings.TrimPrefix(telemetry.Preemptions.Info().Definition, "server: ")
	for _, w := range []int{100, 160} {
		lines := defined(ctxFor("default", t0).Styles.Normal.Faint, " "+strings.Repeat("x", 60), def, w)
		var got []string
		for _, l := range lines {
			l = ansi.Strip(l)
			if ansi.StringWidth(l) > w {
				t.Errorf("%d: %q is wider than the view", w, l)
			}
			got = append(got, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), strings.Repeat("x", 60))))
		}
		if strings.Join(strings.Fields(strings.Join(got, " ")), " ") != strings.Join(strings.Fields(def), " ") {
			t.Errorf("%d: definition %q, want %q", w, strings.Join(got, " "), def)
		}
	}
}

// scrapedLive is s as the direct scrape of gpu-a reports it live at t0.
func scrapedLive(s telemetry.SignalSnapshot) telemetry.SignalSnapshot {
	s.State, s.ObservedAt, s.Source = telemetry.Live, t0, "scrape:http://gpu-a:8000/metrics"
	return s
}

// A figure too long for its column loses whole parts from the end, never
// part of a number ("mean 98.…").
func TestEngineFigureNeverCutsANumber(t *testing.T) {
	in := baseInput()
	in.h = 80
	in.ep.Signals[telemetry.PrefillTime] = scrapedLive(telemetry.SignalSnapshot{Unit: "ms", P50: f(100), P50Bound: telemetry.BoundUpper,
		P95: f(250), P95Bound: telemetry.BoundUpper, P99: f(485), Mean: f(98.25), Count: 123456})
	m := New(ctxFor("default", t0))
	out := ansi.Strip(show(&m, in))
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, " prefill") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no prefill line in\n%s", out)
	}
	if strings.Contains(line, "…") || !strings.Contains(line, "p99 485ms") {
		t.Errorf("prefill figure cut: %q", line)
	}
}
