package promql

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// resetFake serves model llama on two replicas, r1 and r2: instant answers
// as the fake's defaults (the model row's too), and a TTFT histogram chain whose +Inf count per
// point is inf1 on r1 (where it may go down: a restart between two
// scrapes, never seen stopped) and steadily growing on r2; without inf1,
// growing by the clock on both. With starts,
// the up query's answer has both replicas up and, where starts has one,
// their process starts.
func resetFake(t *testing.T, inf1 []float64, starts func(inst string) (float64, bool)) *fakeProm {
	t.Helper()
	f := newFakeProm(t, "llama")
	f.set(func(f *fakeProm) {
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			lbl := llamaLabels
			if strings.HasSuffix(r.URL.Path, "/api/v1/query") && starts != nil && strings.Contains(q, "(up)") {
				var ss []fakeSeries
				for _, inst := range []string{"r1", "r2"} {
					ss = append(ss, fakeSeries{labels: map[string]string{"instance": inst}, value: 1})
					if v, ok := starts(inst); ok {
						ss = append(ss, fakeSeries{labels: map[string]string{"instance": inst, "ttftop_part": "start"}, value: v})
					}
				}
				writeVector(w, f.clock(), ss, nil, nil)
				return true
			}
			if strings.HasSuffix(r.URL.Path, "/api/v1/query") {
				var ss []fakeSeries
				for _, inst := range []string{"r1", "r2", ""} { // "": the model row's
					for _, s := range instantAnswer(q, []string{"llama"}, f.clock(), nil, func(string) time.Duration { return 0 }) {
						ss = append(ss, fakeSeries{labels: lbl(inst), value: s.value})
					}
				}
				writeVector(w, f.clock(), ss, nil, nil)
				return true
			}
			if !strings.HasSuffix(r.URL.Path, "query_range") || !strings.Contains(q, "time_to_first_token") {
				return false
			}
			inf2 := make([]float64, len(inf1))
			for i := range inf2 {
				inf2[i] = 100 + 40*float64(i)
			}
			var ss []fakeSeries
			for inst, inf := range map[string][]float64{"r1": inf1, "r2": inf2} {
				inf := fakeSeries{labels: lbl(inst, "le", "+Inf"), seq: inf}
				if inf1 == nil {
					inf.seq, inf.perSecond = nil, 4 // by the clock: no reset across refreshes
				}
				ss = append(ss, inf,
					fakeSeries{labels: lbl(inst, "ttftop_part", "series"), value: 1})
			}
			start, end, step := parseRange(r)
			writeMatrix(w, ss, start, end, step, nil, nil)
			return true
		}
	})
	return f
}

// A counter reset in the histogram chain (a restart between two scrapes:
// the replica was never seen stopped) restarts the replica's rates: its
// output tok/s is marked young from the reset, and it is labelled
// restarted, "counter reset", dated by the step that showed it; its twin
// is neither. On VictoriaMetrics too: the afresh rate divides by W there.
func TestCounterResetRestartsRates(t *testing.T) {
	for _, store := range []struct {
		name  string
		start time.Time
	}{
		{"Prometheus", time.Unix(1_000_000, 0).Add(250 * time.Millisecond)},
		{"VictoriaMetrics", time.Unix(1_000_000, 0)},
	} {
		t.Run(store.name, func(t *testing.T) {
			f := resetFake(t, []float64{100, 140, 5, 25}, nil)
			s, rec, _ := clockedSource(t, f, store.start)
			if err := s.RefreshOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			young := func(name string) time.Duration {
				got := rec.find(telemetry.KindSample, name, telemetry.OutputTPS)
				if len(got) != 1 {
					t.Fatalf("%s's output tok/s %+v, want one sample", name, got)
				}
				return got[0].SeriesAge
			}
			label := func(name string) string {
				var v string
				for _, o := range rec.find(telemetry.KindEndpoint, name, "") {
					v = o.Info.Labels[telemetry.LabelRestarted]
				}
				return v
			}
			// The chain's points are 10s apart, the newest final one at
			// most a step before now: the reset is 10–30s old.
			if age := young("r1/llama"); age < 10*time.Second || age > 30*time.Second {
				t.Errorf("restarted replica's output tok/s series age %s, want 10–30s (since the reset)", age)
			}
			at, how, ok := telemetry.Endpoint{Labels: map[string]string{telemetry.LabelRestarted: label("r1/llama")}}.Restarted()
			if d := store.start.Sub(at); !ok || how != "counter reset" || d < 0 || d > 30*time.Second {
				t.Errorf("restarted replica's label %q: want a restart by counter reset under 30s before now", label("r1/llama"))
			}
			if age, l := young("r2/llama"), label("r2/llama"); age != 0 || l != "" {
				t.Errorf("its twin: series age %s, restarted label %q; want neither", age, l)
			}
			if row := young("llama"); row <= 0 {
				t.Errorf("the model row's output tok/s not young (%s): it sums a restarted replica's", row)
			}
		})
	}
}

// A chain without a reset restarts nothing.
func TestNoResetNoRestart(t *testing.T) {
	f := resetFake(t, []float64{100, 140, 180, 220}, nil)
	s, rec, _ := clockedSource(t, f, time.Unix(1_000_000, 0).Add(250*time.Millisecond))
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, o := range rec.find(telemetry.KindEndpoint, "", "") {
		if v := o.Info.Labels[telemetry.LabelRestarted]; v != "" {
			t.Errorf("%s labelled restarted %q without a reset", o.Endpoint, v)
		}
	}
	for _, o := range rec.find(telemetry.KindSample, "r1/llama", telemetry.OutputTPS) {
		if o.SeriesAge != 0 {
			t.Errorf("r1's output tok/s young (%s) without a reset", o.SeriesAge)
		}
	}
}

// A replica restarted less than W before ttftop started: its rate over
// [W] still answers from its life before, so the value history's first
// point is the range's start; its histogram's raw series begin at the
// restart. The raw answer dates it, whichever comes first: it is young.
func TestRawSeriesDateARestartBeforeStart(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	const w = 5 * time.Minute
	start, restart, now := t0, t0.Add(3*time.Minute), t0.Add(5*time.Minute)
	for _, order := range []string{"rated first", "raw first"} {
		b := ageBook{}
		rated := func() { b.note("r", start, start, false) } // answered from the life before
		raw := func() { b.note("r", start, restart, true) }
		if order == "rated first" {
			rated()
			raw()
		} else {
			raw()
			rated()
		}
		if age, ok := b.youngFor("r", now, w, true); !ok || age != 2*time.Minute {
			t.Errorf("%s: young %v, age %s; want young, 2m old (since the restart)", order, ok, age)
		}
	}
	// An engine with counters only (no histogram) is dated by its rates.
	b := ageBook{}
	b.note("c", start, restart, false)
	if age, ok := b.youngFor("c", now, w, true); !ok || age != 2*time.Minute {
		t.Errorf("counters only: young %v, age %s; want 2m", ok, age)
	}
}
