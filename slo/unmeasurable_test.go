package slo

import (
	"testing"
	"time"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/telemetry"
)

// announce is a scraped TGI endpoint's announcement, as the scrape source
// makes it: the engine's unmeasurable signals from the alias table.
func announceTGI(at time.Time) telemetry.Observation {
	return telemetry.Observation{Kind: telemetry.KindEndpoint, At: at, Endpoint: "tgi/bloom", Source: "scrape:http://tgi/metrics",
		Interval: 5 * time.Second, Info: &telemetry.Endpoint{Name: "tgi/bloom", Engine: telemetry.EngineTGI,
			Unmeasurable: engines.Unmeasurable(telemetry.EngineTGI)}}
}

// An objective on a signal the endpoint's engine never exposes (TTFT on
// TGI) is unmeasurable from the first evaluation and stays so, with why;
// it never fires, counts for nothing in the badge, and check says it
// could not be measured and why. The objective beside it (TPOT, which TGI
// has) waits for data as usual.
func TestUnmeasurableFromTheStart(t *testing.T) {
	ttft := Objective{Name: "ttft-p95", Kind: Percentile, Signal: telemetry.TTFT, Percentile: 0.95, Threshold: 5, Window: time.Minute}
	tpot := Objective{Name: "tpot-p95", Kind: Percentile, Signal: telemetry.TPOT, Percentile: 0.95, Threshold: 0.05, Window: time.Minute}
	h := newHarness(t, []Objective{ttft, tpot}, Options{})
	for i := range 20 {
		h.observe(announceTGI(h.now))
		for _, tr := range h.eng.Evaluate(h.now) {
			if tr.Alert.Objective == "ttft-p95" && tr.To != Unmeasurable {
				t.Fatalf("step %d: ttft went %s → %s", i, tr.From, tr.To)
			}
		}
		h.now = h.now.Add(stepEvery)
	}
	byName := map[string]Alert{}
	for _, a := range h.eng.Current() {
		byName[a.Objective] = a
	}
	if a := byName["ttft-p95"]; a.State != Unmeasurable || a.Reason != "unmeasurable: TGI exposes no TTFT histogram" || !a.ActiveAt.IsZero() {
		t.Errorf("ttft %+v", a)
	}
	if a := byName["tpot-p95"]; a.State != NoDataState {
		t.Errorf("tpot %+v: TGI has a TPOT histogram, its data may yet come", a)
	}
	if open := h.eng.Alerts(); len(open) != 2 || open[0].Objective != "tpot-p95" || open[1].State != Unmeasurable {
		t.Errorf("open alerts %+v: no data first, then unmeasurable", open)
	}
	if b := BadgeOf([]Alert{byName["ttft-p95"]}); b != BadgeNone {
		t.Errorf("badge of an unmeasurable objective alone: %s", b)
	}
	if b := BadgeOf([]Alert{byName["ttft-p95"], {State: Inactive, EvaluatedAt: h.now, Data: telemetry.Live}}); b != BadgeOK {
		t.Errorf("badge beside a met objective: %s", b)
	}
	for _, r := range h.eng.Check(h.now) {
		if r.Objective == "ttft-p95" && (r.Measured || r.Reason != "unmeasurable: TGI exposes no TTFT histogram") {
			t.Errorf("check %+v", r)
		}
	}
}

// A probe measures TTFT whatever the engine exposes: on a probed TGI
// endpoint the objective is judged, and breaches fire.
func TestProbedSignalIsNeverUnmeasurable(t *testing.T) {
	ttft := Objective{Name: "ttft-p95", Kind: Percentile, Signal: telemetry.TTFT, Percentile: 0.95, Threshold: 5, Window: time.Minute}
	h := newHarness(t, []Objective{ttft}, Options{})
	h.observe(announceTGI(h.now))
	probe := "probe:http://tgi/v1/chat/completions"
	h.observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: h.now, Endpoint: "tgi/bloom", Source: probe,
		Info: &telemetry.Endpoint{Name: "tgi/bloom"}})
	h.eng.Evaluate(h.now)
	if a := h.eng.Current()[0]; a.State != NoDataState {
		t.Errorf("before the first probe: %+v, want no data (the probe's first answer is coming)", a)
	}
	h.now = h.now.Add(time.Second)
	h.observe(telemetry.Observation{Kind: telemetry.KindSample, At: h.now, Endpoint: "tgi/bloom", Signal: telemetry.TTFT,
		Source: probe, Value: 7, Interval: stepEvery})
	h.eng.Evaluate(h.now)
	if a := h.eng.Current()[0]; a.State != Firing || a.Value != 7 {
		t.Errorf("probed ttft %+v", a)
	}
}
