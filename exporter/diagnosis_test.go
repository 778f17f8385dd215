package exporter

import (
	"testing"
	"time"

	"github.com/ttftop/ttftop/diagnosis"
)

type fixedDiagnosis map[string]diagnosis.Diagnosis

func (f fixedDiagnosis) Latest() map[string]diagnosis.Diagnosis { return f }

// Each diagnosed endpoint has the whole vocabulary as a one-hot set, and
// the named causes their start.
func TestDiagnosisSeries(t *testing.T) {
	since := time.Unix(1_800_000_000, 0)
	exp := New(Options{Diagnosis: fixedDiagnosis{
		"a": {Causes: []diagnosis.Finding{{Cause: diagnosis.KVCache, Since: since}, {Cause: diagnosis.Queueing, Since: since.Add(time.Second)}}},
		"b": {Causes: []diagnosis.Finding{{Cause: diagnosis.None, Since: since}}},
	}})
	fams, err := exp.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	sinces := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			switch f.GetName() {
			case "ttftop_diagnosis_cause":
				got[l["endpoint"]+" "+l["cause"]] = m.GetGauge().GetValue()
			case "ttftop_diagnosis_cause_since_seconds":
				sinces[l["endpoint"]+" "+l["cause"]] = m.GetGauge().GetValue()
			}
		}
	}
	if len(got) != 2*len(diagnosis.Vocabulary) {
		t.Fatalf("%d cause series, want %d: %v", len(got), 2*len(diagnosis.Vocabulary), got)
	}
	for key, v := range got {
		want := 0.0
		if key == "a kv_cache" || key == "a queueing" || key == "b none" {
			want = 1
		}
		if v != want {
			t.Errorf("%s = %v, want %v", key, v, want)
		}
	}
	if len(sinces) != 3 || sinces["a queueing"] != 1_800_000_001 || sinces["b none"] != 1_800_000_000 {
		t.Errorf("since: %v", sinces)
	}
	// Without a diagnosis source, no series.
	fams, err = New(Options{}).Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "ttftop_diagnosis_cause" {
			t.Errorf("series without a source: %v", f)
		}
	}
}
