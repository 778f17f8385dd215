//go:build integration

package failuresuite

import (
	"syscall"
	"testing"
	"time"
)

// promSource is the dashboard's PromQL source in d.
func promSource(d snapshotDoc) (sourceDoc, bool) {
	srcs := sourcesOfKind(d, "promql")
	if len(srcs) != 1 {
		return sourceDoc{}, false
	}
	return srcs[0], true
}

// storeTTFT is the TTFT figure of model in d, as PromQL mode names it.
func storeTTFT(d snapshotDoc, model string) (figureDoc, bool) {
	ep, ok := endpointByModel(d, model)
	if !ok {
		return figureDoc{}, false
	}
	return anyFigure(ep, sigTTFT)
}

// promDashboard starts the simulator serving model, a real Prometheus
// scraping it and the headless dashboard in PromQL mode, and waits for a
// live TTFT figure from the store; it returns how long that took.
func promDashboard(t *testing.T, model string) (*store, *headless, time.Duration) {
	t.Helper()
	sim := startSim(t, "127.0.0.1:0", "--model", model+":1b", "--load", "2")
	prom := startPrometheus(t, sim.addr)
	hl := startHeadless(t, "dashboard", "--prometheus", prom.url)
	start := time.Now()
	first := hl.mustWaitDoc(t, start, 2*time.Minute, "a TTFT figure from Prometheus", func(d snapshotDoc) bool {
		f, ok := storeTTFT(d, model)
		return ok && f.liveNumber()
	})
	return prom, hl, first.got.Sub(start)
}

// neverTrusted checks the documents from from on: the PromQL source is
// never ok and model's TTFT never shown live, since the store broke at
// brokeAt (how: "kill", "hang").
func neverTrusted(t *testing.T, hl *headless, from, brokeAt time.Time, model, how string) {
	t.Helper()
	for _, r := range hl.between(from, time.Now()) {
		if s, ok := promSource(r.doc); !ok || s.State == "live" {
			t.Errorf("%s after the %s: PromQL source %+v (present %v), want it stale or failing", secs(r.got.Sub(brokeAt)), how, s, ok)
			return
		}
		if f, ok := storeTTFT(r.doc, model); ok && f.liveNumber() {
			t.Errorf("%s after the %s: TTFT %+v shown live from a broken store", secs(r.got.Sub(brokeAt)), how, f)
			return
		}
	}
}

// TestPrometheusDown is Proof 4, first half: the dashboard in PromQL mode
// shows the simulator's TTFT from a real Prometheus; Prometheus is killed
// → the source says error within 30 s, and from then on never ok, and the
// TTFT figure is never shown live.
func TestPrometheusDown(t *testing.T) {
	t.Parallel()
	const model = "prom-m"
	prom, hl, firstAfter := promDashboard(t, model)
	seen := map[string]time.Duration{"ttft_after": firstAfter}

	killedAt := time.Now()
	prom.proc.kill(t)
	errSeen, ok := hl.waitDoc(killedAt, 30*time.Second, func(d snapshotDoc) bool {
		s, ok := promSource(d)
		return ok && s.State == "error"
	})
	if !ok {
		measured(t, "prometheus-down", seen, "ttft_after", "source_error_after")
		t.Fatalf("the PromQL source never said error within 30 s of Prometheus being killed; last document:\n%s", hl.lastDocText())
	}
	seen["source_error_after"] = errSeen.got.Sub(killedAt)
	// Read 20 s more of documents: the state must not flip back to ok.
	hl.mustWaitDoc(t, errSeen.got.Add(20*time.Second), 40*time.Second, "documents 20 s after the error", anyDoc)
	neverTrusted(t, hl, errSeen.got, killedAt, model, "kill")
	measured(t, "prometheus-down", seen, "ttft_after", "source_error_after")
}

// TestPrometheusHung: a Prometheus that accepts queries and never answers
// (SIGSTOP) keeps the source's refresh in flight, so it reports nothing;
// it read "ok" for as long as it hung. Within 30 s of the stop the source
// must say stale or error, never ok while it hangs (25 s more), the TTFT
// must never be shown live, and once Prometheus runs again the source is
// ok again.
func TestPrometheusHung(t *testing.T) {
	t.Parallel()
	const model = "hung-m"
	prom, hl, _ := promDashboard(t, model)
	stoppedAt := time.Now()
	prom.proc.signal(t, syscall.SIGSTOP)
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			prom.proc.signal(t, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume) // before its stop: a stopped process takes no SIGTERM
	said, ok := hl.waitDoc(stoppedAt, 30*time.Second, func(d snapshotDoc) bool {
		s, ok := promSource(d)
		return ok && (s.State == "stale" || s.State == "error")
	})
	if !ok {
		t.Fatalf("the PromQL source never said stale or error within 30 s of Prometheus hanging; last document:\n%s", hl.lastDocText())
	}
	seen := map[string]time.Duration{"source_said_after": said.got.Sub(stoppedAt)}
	hl.mustWaitDoc(t, said.got.Add(25*time.Second), 45*time.Second, "documents 25 s after", anyDoc)
	neverTrusted(t, hl, said.got, stoppedAt, model, "hang")
	resumedAt := time.Now()
	resume()
	back, ok := hl.waitDoc(resumedAt, 90*time.Second, func(d snapshotDoc) bool {
		s, ok := promSource(d)
		return ok && s.State == "live"
	})
	if !ok {
		t.Fatalf("the PromQL source was not ok again within 90 s of Prometheus resuming; last document:\n%s", hl.lastDocText())
	}
	seen["ok_again_after"] = back.got.Sub(resumedAt)
	// Once the source answers again, an earlier refresh's timeout is no
	// figure's error: until a new histogram window comes, the figures are
	// as old as their last one (QA round 5: TPOT ERROR for ~10 s).
	hl.mustWaitDoc(t, back.got.Add(20*time.Second), 45*time.Second, "documents 20 s after the source was ok again", anyDoc)
	noErrorOnceOK(t, hl, back.got, model)
	measured(t, "prometheus-hung", seen, "source_said_after", "ok_again_after")
}

// noErrorOnceOK checks that no figure of model reads as an error in the
// documents since from in which the PromQL source is ok.
func noErrorOnceOK(t *testing.T, hl *headless, from time.Time, model string) {
	t.Helper()
	for _, r := range hl.between(from, time.Now()) {
		if s, ok := promSource(r.doc); !ok || s.State != "live" {
			continue
		}
		ep, ok := endpointByModel(r.doc, model)
		if !ok {
			continue
		}
		for _, figures := range []map[string]figureDoc{ep.Signals, ep.Server, ep.Client} {
			for sig, f := range figures {
				if f.State == "error" {
					t.Errorf("%s after the source was ok again: %s %s, want no error from an earlier refresh", secs(r.got.Sub(from)), sig, f)
					return
				}
			}
		}
	}
}

// TestVictoriaMetricsDefaultLag is Proof 4, second half: VictoriaMetrics at
// its default flags (query results 30 s behind) scraping the simulator →
// TTFT figures appear once the store has them and stay present for 45 s,
// and the source says it lags rather than plain ok.
func TestVictoriaMetricsDefaultLag(t *testing.T) {
	t.Parallel()
	const model = "vm-m"
	const stayFor = 45 * time.Second
	sim := startSim(t, "127.0.0.1:0", "--model", model+":1b", "--load", "2")
	vm := startVictoriaMetrics(t, sim.addr)
	hl := startHeadless(t, "dashboard", "--prometheus", vm.url)
	start := time.Now()

	hasTTFT := func(d snapshotDoc) bool {
		f, ok := storeTTFT(d, model)
		return ok && f.hasNumber()
	}
	lagging := func(d snapshotDoc) bool {
		s, ok := promSource(d)
		return ok && s.saysLagging()
	}
	seen := watch(2*time.Minute, start,
		observation{"ttft_after", docSeen(hl, start, hasTTFT)},
		observation{"lagging_after", docSeen(hl, start, lagging)})
	if _, ok := seen["ttft_after"]; !ok {
		measured(t, "victoriametrics-default-lag", seen, "ttft_after", "lagging_after", "ttft_stayed")
		t.Fatalf("no TTFT figure from VictoriaMetrics within 2 min; last document:\n%s", hl.lastDocText())
	}
	firstTTFT := start.Add(seen["ttft_after"])
	hl.mustWaitDoc(t, firstTTFT.Add(stayFor), stayFor+30*time.Second, "documents 45 s after the first TTFT", anyDoc)
	stayed := time.Duration(0)
	for _, r := range hl.between(firstTTFT, firstTTFT.Add(stayFor)) {
		if !hasTTFT(r.doc) {
			t.Errorf("%s after it first showed, the TTFT figure is gone; document:\n%s", secs(r.got.Sub(firstTTFT)), docSummary(r.doc, model))
			break
		}
		stayed = r.got.Sub(firstTTFT)
	}
	seen["ttft_stayed"] = stayed
	if d, ok := seen["lagging_after"]; !ok {
		t.Errorf("the PromQL source never said it lags; last document:\n%s", hl.lastDocText())
	} else {
		for _, r := range hl.between(start.Add(d), time.Now()) {
			if s, ok := promSource(r.doc); !ok || s.plainOK() {
				t.Errorf("%s after start, once it had said it lags, the PromQL source is %+v (present %v): plain ok", secs(r.got.Sub(start)), s, ok)
				break
			}
		}
	}
	measured(t, "victoriametrics-default-lag", seen, "ttft_after", "lagging_after", "ttft_stayed")
}

// anyDoc accepts every document: waiting for one read after a time.
func anyDoc(snapshotDoc) bool { return true }

// docSummary is a short account of a document for failure messages.
func docSummary(d snapshotDoc, model string) string {
	s, _ := promSource(d)
	f, ok := storeTTFT(d, model)
	return "source " + s.State + " " + s.Error + "; ttft present " + map[bool]string{true: "yes", false: "no"}[ok] + " state " + f.State + " " + f.Error
}
