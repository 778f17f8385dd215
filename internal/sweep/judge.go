package sweep

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// Judgement is one objective over one step. Threshold and Value are in
// Unit: "ms" for latency percentiles, "ratio" (0–1) for shares and rates;
// Limit says whether Value must stay at or below ("max": latencies, the
// error rate) or at or above ("min": the share of good requests of a
// ratio objective, availability) the threshold.
type Judgement struct {
	Objective string           `json:"objective"`
	Kind      slo.Kind         `json:"kind"`
	Signal    telemetry.Signal `json:"signal"`
	Unit      string           `json:"unit"`
	Limit     string           `json:"limit"`
	// Percentile of a percentile objective (0.95).
	Percentile float64 `json:"percentile,omitempty"`
	// LatencyMS is the per-request bound of a ratio objective.
	LatencyMS float64  `json:"latency_ms,omitempty"`
	Threshold float64  `json:"threshold"`
	Value     *float64 `json:"value"` // null: no data in the step
	Met       *bool    `json:"met"`   // null: not judged (no data)
	// Over is how many times over its limit the step is (value/threshold
	// for latencies, the spent share of the error budget otherwise).
	Over *float64 `json:"over,omitempty"`
}

// MarshalJSON names the value and threshold for their unit, as all of
// ttftop's JSON (docs/json.md): value_ms and threshold_ms, or value_ratio
// and threshold_ratio; over is a ratio too.
func (j Judgement) MarshalJSON() ([]byte, error) {
	type plain Judgement
	m, err := telemetry.JSONMap(plain(j))
	if err != nil {
		return nil, err
	}
	delete(m, "unit")
	telemetry.RenameJSON(m, "value", "value_"+j.Unit, 1)
	telemetry.RenameJSON(m, "threshold", "threshold_"+j.Unit, 1)
	telemetry.RenameJSON(m, "over", "over_ratio", 1)
	return json.Marshal(m)
}

// latencyOf maps a latency signal to its per-request figure.
func latencyOf(sig telemetry.Signal) (func(*probe.Result) (time.Duration, bool), bool) {
	switch sig {
	case telemetry.TTFT:
		return ttftOf, true
	case telemetry.TTFA:
		return ttfaOf, true
	case telemetry.TPOT:
		return tpotOf, true
	case telemetry.E2E:
		return e2eOf, true
	}
	return nil, false
}

// judge evaluates the objectives a sweep can judge on a step's requests;
// others (on server-side signals) are left out.
func judge(objs []slo.Objective, results []*probe.Result) []Judgement {
	var out []Judgement
	for _, o := range objs {
		j := Judgement{Objective: o.Name, Kind: o.Kind, Signal: o.Signal}
		switch o.Kind {
		case slo.Percentile:
			of, ok := latencyOf(o.Signal)
			if !ok {
				continue
			}
			j.Unit, j.Limit, j.Percentile, j.Threshold = "ms", "max", o.Percentile, o.Threshold*1000
			if v := quantileMS(results, o.Percentile, of); v != nil {
				j.set(*v, *v <= j.Threshold, *v/j.Threshold)
			}
		case slo.Ratio:
			of, ok := latencyOf(o.Signal)
			if !ok {
				continue
			}
			j.Unit, j.Limit, j.Threshold, j.LatencyMS = "ratio", "min", o.Target, o.Threshold*1000
			if len(results) > 0 {
				good := 0
				for _, r := range results {
					if d, ok := of(r); ok && d.Seconds() <= o.Threshold {
						good++
					}
				}
				share := float64(good) / float64(len(results))
				j.set(share, share >= o.Target, budgetSpent(share, o.Target))
			}
		case slo.ErrorRate:
			j.Unit, j.Limit, j.Threshold = "ratio", "max", o.Threshold
			if len(results) > 0 {
				rate := float64(failed(results)) / float64(len(results))
				j.set(rate, rate <= o.Threshold, rate/o.Threshold)
			}
		case slo.Availability:
			j.Unit, j.Limit, j.Threshold = "ratio", "min", o.Target
			if len(results) > 0 {
				share := 1 - float64(failed(results))/float64(len(results))
				j.set(share, share >= o.Target, budgetSpent(share, o.Target))
			}
		default:
			continue
		}
		out = append(out, j)
	}
	return out
}

func (j *Judgement) set(v float64, met bool, over float64) {
	j.Value, j.Met, j.Over = &v, &met, &over
}

// budgetSpent is the share of requests missing the target over the share
// the target allows to miss (1 = exactly at the target).
func budgetSpent(share, target float64) float64 {
	if target >= 1 {
		if share >= 1 {
			return 0
		}
		return 1e9
	}
	return (1 - share) / (1 - target)
}

func failed(results []*probe.Result) int {
	n := 0
	for _, r := range results {
		if !r.OK {
			n++
		}
	}
	return n
}

// stopReason says why the sweep must stop after its last step, or "".
func stopReason(steps []Step, factor float64) string {
	if r := farExceeded(steps[len(steps)-1], factor); r != "" {
		return r
	}
	return saturation(steps)
}

// farExceeded names an objective the step exceeded factor times over.
func farExceeded(last Step, factor float64) string {
	for _, j := range last.Objectives {
		if j.Over != nil && *j.Over > factor {
			return fmt.Sprintf("objective %s far exceeded at concurrency %d (%.1f× its limit)", j.Objective, last.Concurrency, *j.Over)
		}
	}
	return ""
}

// saturation says how the last step shows over-saturation, or "".
func saturation(steps []Step) string {
	last := steps[len(steps)-1]
	if last.Saturating {
		return fmt.Sprintf("over-saturated at concurrency %d: TTFT rose with time within the step", last.Concurrency)
	}
	if len(steps) < 2 {
		return ""
	}
	prev := steps[len(steps)-2]
	if prev.OutputTPS != nil && last.OutputTPS != nil && prev.TTFTp95ms != nil && last.TTFTp95ms != nil &&
		*last.OutputTPS < 1.1**prev.OutputTPS && *last.TTFTp95ms >= 1.5**prev.TTFTp95ms {
		return fmt.Sprintf("over-saturated at concurrency %d: output tok/s %+.0f%% over concurrency %d while TTFT p95 grew %.1f×",
			last.Concurrency, 100*(*last.OutputTPS / *prev.OutputTPS - 1), prev.Concurrency, *last.TTFTp95ms / *prev.TTFTp95ms)
	}
	return ""
}
