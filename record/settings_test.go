package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

func TestSettingsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl.gz")
	w, err := NewWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	store := telemetry.DefaultStoreConfig()
	store.MaxWindow = 15 * time.Minute
	objs := []slo.Objective{{Name: "ttft-p95", Kind: slo.Percentile, Signal: telemetry.TTFT, Percentile: 0.95, Threshold: 0.001,
		Window: time.Minute, For: 3 * time.Second, Severity: "warning"}}
	sloPart := &SLOSettings{Objectives: objs, Options: slo.Options{Scale: 4032, History: 7}, EvalEvery: time.Second}
	if err := w.WriteSettings(Settings{SLO: sloPart, Store: &store}); err != nil {
		t.Fatal(err)
	}
	view := &ViewSettings{Window: time.Minute, Refresh: 5 * time.Second}
	if err := w.WriteSettings(Settings{View: view}); err != nil {
		t.Fatal(err)
	}
	obs := withoutLive(mixed(50, time.Second))
	for _, o := range obs {
		w.Observe(o)
	}
	if err := w.WriteSettings(Settings{View: &ViewSettings{Window: time.Hour}}); !errors.Is(err, errSettingsLate) {
		t.Errorf("settings after an observation: %v, want refused", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, ok, err := ReadSettings(path)
	if err != nil || !ok {
		t.Fatalf("ReadSettings: %v %v", ok, err)
	}
	if want := (Settings{SLO: sloPart, Store: &store, View: view}); !reflect.DeepEqual(got, want) {
		t.Errorf("settings came back as\n%+v\nwant\n%+v", got, want)
	}
	// Settings lines are no observations: a reader sees exactly those.
	read, err := readAll(t, path)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, read, obs)
}

// TestVersion1Readable: a recording from before settings lines reads as
// before, and says it has no settings.
func TestVersion1Readable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.jsonl")
	at := t0.Format(time.RFC3339Nano)
	v1 := fmt.Sprintf(`{"kind":"header","at":%q,"format":"ttftop-recording","version":1}
{"kind":"checkpoint","at":"0001-01-01T00:00:00Z","line":2}
{"kind":"checkpoint","at":%q,"seq":1,"line":3}
{"kind":"sample","at":%q,"endpoint":"e","signal":"ttft","source":"probe:x","value":0.5}
`, at, at, at)
	if err := os.WriteFile(path, []byte(v1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ReadSettings(path); ok || err != nil {
		t.Errorf("a version-1 recording: settings %v, %v", ok, err)
	}
	read, err := readAll(t, path)
	if err != nil || len(read) != 1 || read[0].Value != 0.5 {
		t.Errorf("read %+v, %v", read, err)
	}
}

// alertSink records what a replay feeds it.
type alertSink struct {
	mu     sync.Mutex
	obs    int
	alerts []slo.Transition
}

func (s *alertSink) Observe(telemetry.Observation) { s.mu.Lock(); s.obs++; s.mu.Unlock() }

func (s *alertSink) ObserveAlert(_ time.Time, raw json.RawMessage) {
	var tr slo.Transition
	if err := json.Unmarshal(raw, &tr); err != nil {
		panic(err)
	}
	s.mu.Lock()
	s.alerts = append(s.alerts, tr)
	s.mu.Unlock()
}

// book is the alert state transitions leave: each alert's latest state,
// and the last n resolved (what slo.Engine keeps).
func book(trs []slo.Transition, n int) (map[string]slo.State, []string) {
	latest := map[string]slo.State{}
	var resolved []string
	for _, tr := range trs {
		k := tr.Alert.Objective + "/" + tr.Alert.Endpoint
		latest[k] = tr.To
		if tr.To == slo.Resolved {
			resolved = append(resolved, fmt.Sprintf("%s@%s", k, tr.At.Format(time.TimeOnly)))
		}
	}
	if len(resolved) > n {
		resolved = resolved[len(resolved)-n:]
	}
	return latest, resolved
}

// TestAlertStateInPreambles: reading from any segment, the preamble's
// alert lines and the alerts after it leave the state and resolved
// history every alert line from the start leaves; a read from the start
// sees each transition once.
func TestAlertStateInPreambles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl.gz")
	w, err := NewWriter(path, WithSegment(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	const keep = 3
	if err := w.WriteSettings(Settings{SLO: &SLOSettings{Objectives: []slo.Objective{}, Options: slo.Options{History: keep}}}); err != nil {
		t.Fatal(err)
	}
	var trs []slo.Transition
	states := []slo.State{slo.Pending, slo.Firing, slo.Resolved}
	for s := 0; s < 600; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		w.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: at, Endpoint: "e", Signal: telemetry.TTFT, Source: probeSrc, Value: 1})
		if s%7 == 3 {
			i := len(trs)
			tr := slo.Transition{At: at, From: states[(i+2)%3], To: states[i%3],
				Alert: slo.Alert{Objective: fmt.Sprintf("o%d", i%5), Endpoint: "e", State: states[i%3]}}
			if err := w.WriteTransition(tr); err != nil {
				t.Fatal(err)
			}
			trs = append(trs, tr)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	all := &alertSink{}
	if err := Feed(path, time.Time{}, t0.Add(time.Hour), all); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(transitionTimes(all.alerts), transitionTimes(trs)) {
		t.Fatalf("a read from the start gave %d transitions, %d were written", len(all.alerts), len(trs))
	}
	for _, s := range []int{45, 200, 333, 599} {
		at := t0.Add(time.Duration(s) * time.Second)
		var upTo []slo.Transition
		for _, tr := range trs {
			if !tr.At.After(at) {
				upTo = append(upTo, tr)
			}
		}
		got := &alertSink{}
		if err := Feed(path, at.Add(-10*time.Second), at, got); err != nil {
			t.Fatal(err)
		}
		if len(got.alerts) >= len(upTo) && s > 100 {
			t.Errorf("+%ds: the read from its segment gave all %d transitions: it did not start there", s, len(got.alerts))
		}
		wl, wr := book(upTo, keep)
		gl, gr := book(got.alerts, keep)
		if !reflect.DeepEqual(gl, wl) || !reflect.DeepEqual(gr, wr) {
			t.Errorf("+%ds: from its segment the alerts are\n%v %v\nfrom the start\n%v %v", s, gl, gr, wl, wr)
		}
	}
	// The preamble's lines are marked state, and a sequential read skips them.
	r := openReader(t, path)
	n := 0
	for {
		e, err := r.NextEntry()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.State {
			t.Fatalf("a read from the start returned a preamble line: %+v", e)
		}
		if e.Observation.Kind == KindAlert {
			n++
		}
	}
	if n != len(trs) {
		t.Errorf("read %d alert lines, wrote %d", n, len(trs))
	}
}

func transitionTimes(trs []slo.Transition) []time.Time {
	out := make([]time.Time, len(trs))
	for i, tr := range trs {
		out[i] = tr.At
	}
	return out
}
