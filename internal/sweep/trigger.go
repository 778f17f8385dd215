package sweep

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/telemetry"
)

// kneeQuantile is the quantile the knee's TPOT is described by (its p95),
// and tail the share of requests above it.
const (
	kneeQuantile = 0.95
	tail         = 1 - kneeQuantile
)

// Trigger is the decision a KEDA prometheus trigger makes: KEDA runs Query
// as an instant query, takes its one sample and compares it with
// Threshold (metricType Value: ceil(replicas × value / threshold)
// replicas, beyond the HPA's 10 % tolerance). The value reads at or below
// Threshold at the knee's load and under, above it past the knee.
type Trigger struct {
	Query     string  `json:"query"`
	Threshold float64 `json:"threshold_ratio"` // the share the query reads
	// Series is the engine's series the decision rests on.
	Series string `json:"series"`
	// BoundMS is the bucket bound (ms) whose share the query reads; 0
	// when the query reads no single bound.
	BoundMS float64 `json:"bound_ms,omitempty"`
	// Reads says what the value is and at what resolution.
	Reads string `json:"reads"`
	// Warning says why the engine's buckets cannot resolve the knee: the
	// trigger then fires only further past it. "" when they can.
	Warning string `json:"warning,omitempty"`
}

// TriggerOf derives the trigger from the knee, on the engine's TPOT metric
// (the first TPOT alias in the engines table; vLLM when the engine is not
// known), window being the rate window; matchers (`namespace="llm"`)
// narrow every series it reads to the replicas scaled.
//
// On a histogram whose buckets the engines table knows, the value is the
// share of requests whose TPOT exceeded a bucket bound B: exact, as every
// request is counted in or out of le=B, where histogram_quantile would
// interpolate inside a bucket and read any TPOT under vLLM's first bound
// (10 ms) as 9.5 ms. B is the highest bound that between 5 % and half of
// the knee's requests exceeded (as the client measured them), and the
// threshold that share: more requests over B than at the knee is more
// load than the knee's. Where no bound splits the knee's requests so, B
// is the first bound at or above the knee's TPOT p95 and the threshold
// 5 %: the trigger fires once the p95 passes B, and warns when B lies
// more than 10 % above the knee's p95.
func TriggerOf(r *Report, window string, matchers ...string) (Trigger, error) {
	tr, err := triggerOf(r, window, matchers)
	// Four significant digits, as the snippet writes it: one figure.
	tr.Threshold, _ = strconv.ParseFloat(strconv.FormatFloat(tr.Threshold, 'g', 4, 64), 64)
	return tr, err
}

func triggerOf(r *Report, window string, matchers []string) (Trigger, error) {
	if r.Knee == nil || r.Knee.TPOTp95ms == nil {
		return Trigger{}, errors.New("no knee with a TPOT p95: nothing to set the threshold at")
	}
	engine := r.Engine
	if engine == "" || engine == telemetry.EngineUnknown {
		engine = telemetry.EngineVLLM
	}
	spec, ok := engines.Lookup(engine)
	if !ok || len(spec.Signals[telemetry.TPOT]) == 0 {
		return Trigger{}, fmt.Errorf("engine %s has no TPOT metric in the engines table", engine)
	}
	a := spec.Signals[telemetry.TPOT][0]
	sel := joinMatchers(append([]string{modelSelector(spec, r.Model)}, matchers...)...)
	kneeS := *r.Knee.TPOTp95ms / 1000
	switch {
	case a.Type == engines.Histogram && len(a.Buckets) > 0:
		return shareTrigger(a, sel, window, kneeS, r.Knee.tpot)
	case a.Type == engines.Histogram:
		return Trigger{Query: scaled(a, fmt.Sprintf("max(histogram_quantile(%g, sum by (le) (rate(%s%s[%s]))))",
			kneeQuantile, a.Bucket(), braces(sel), window)),
			Threshold: kneeS, Series: a.Bucket(),
			Reads: fmt.Sprintf("TPOT p95 interpolated by histogram_quantile from %s, against the knee's %.1f ms", a.Bucket(), kneeS*1000),
			Warning: fmt.Sprintf("ttftop does not know the bucket bounds of %s: histogram_quantile interpolates inside a bucket, "+
				"so a threshold inside one is not resolved; check it against the engine's buckets", a.Name),
		}, nil
	case a.Type == engines.CounterRatio:
		return Trigger{Query: scaled(a, fmt.Sprintf("sum(rate(%s%s[%s])) / sum(rate(%s%s[%s]))", a.Name, braces(sel), window, a.Per, braces(sel), window)),
			Threshold: kneeS, Series: a.Name + " / " + a.Per,
			Reads:   fmt.Sprintf("mean TPOT from the counters %s / %s, against the knee's TPOT p95 %.1f ms", a.Name, a.Per, kneeS*1000),
			Warning: "the engine gives a mean TPOT, not a p95: a mean stays under the p95, so the trigger fires only past the knee",
		}, nil
	}
	return Trigger{Query: scaled(a, fmt.Sprintf("max(%s%s)", a.Name, braces(sel))), Threshold: kneeS, Series: a.Name,
		Reads: fmt.Sprintf("the engine's TPOT figure %s, against the knee's TPOT p95 %.1f ms", a.Name, kneeS*1000)}, nil
}

// shareTrigger is the share of requests over a bucket bound (see TriggerOf).
func shareTrigger(a engines.Alias, sel, window string, kneeS float64, samples []float64) (Trigger, error) {
	f := a.Factor()
	pick, threshold := -1, tail
	for i, b := range a.Buckets {
		if s := shareOver(samples, b*f); s >= tail && s <= 0.5 {
			pick, threshold = i, s
		}
	}
	warning, fellBack := "", pick < 0
	if fellBack {
		for i, b := range a.Buckets {
			if b*f >= kneeS {
				pick = i
				break
			}
		}
		if pick < 0 {
			return Trigger{}, fmt.Errorf("the knee's TPOT p95 %.1f ms lies beyond the last bucket bound of %s", kneeS*1000, a.Name)
		}
		if b := a.Buckets[pick] * f; b > 1.1*kneeS {
			lower := 0.0
			if pick > 0 {
				lower = a.Buckets[pick-1] * f
			}
			warning = fmt.Sprintf("the engine's TPOT buckets cannot resolve the knee: its TPOT p95 %.1f ms lies inside the bucket (%s, %s], "+
				"whose requests all count alike; the trigger fires only once more than %.0f %% of requests exceed %s, %.2f× the knee's p95",
				kneeS*1000, msBound(lower), msBound(b), tail*100, msBound(b), b/kneeS)
		}
	}
	b := a.Buckets[pick]
	atKnee := shareOver(samples, b*f)
	meaning := fmt.Sprintf("the knee's requests exceeded it %.1f %% of the time (client-measured): more is more load than the knee's", atKnee*100)
	if fellBack {
		meaning = fmt.Sprintf("above %.0f %% the TPOT p95 has passed it (the knee's requests: %.1f %% over it, client-measured)", tail*100, atKnee*100)
	}
	le := "le=~" + strconv.Quote(leRegexp(b))
	bucketSel := braces(joinMatchers(sel, le))
	q := fmt.Sprintf("1 - sum(rate(%s%s[%s])) / sum(rate(%s%s[%s]))", a.Bucket(), bucketSel, window, a.Count(), braces(sel), window)
	return Trigger{Query: q, Threshold: threshold, BoundMS: b * f * 1000,
		Series: fmt.Sprintf("%s{le=%q} / %s", a.Bucket(), strconv.FormatFloat(b, 'f', -1, 64), a.Count()),
		Reads: fmt.Sprintf("the share of requests whose TPOT (server-side, one per request) exceeded %s, exact at that bucket bound "+
			"(the engine resolves TPOT only at its bounds: %s); %s", msBound(b*f), boundsText(a.Buckets, f), meaning),
		Warning: warning}, nil
}

// shareOver is the share of samples above b; 0 without samples.
func shareOver(samples []float64, b float64) float64 {
	if len(samples) == 0 {
		return 0
	}
	n := 0
	for _, v := range samples {
		if v > b {
			n++
		}
	}
	return float64(n) / float64(len(samples))
}

// leRegexp matches a bound however it is written: Python's client writes
// 10.0, Go's 10, and Prometheus 3 normalises either to 10.0.
func leRegexp(b float64) string {
	s := strconv.FormatFloat(b, 'f', -1, 64)
	if strings.Contains(s, ".") {
		return regexp.QuoteMeta(s) + "0*"
	}
	return s + `(\.0*)?`
}

func msBound(s float64) string { return strconv.FormatFloat(s*1000, 'f', -1, 64) + " ms" }

// boundsText lists the first bounds in ms, enough to see the resolution.
func boundsText(bounds []float64, f float64) string {
	var parts []string
	for i, b := range bounds {
		if i == 6 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, strconv.FormatFloat(b*f*1000, 'f', -1, 64))
	}
	return strings.Join(parts, ", ") + " ms"
}

func modelSelector(spec engines.Spec, model string) string {
	if l := spec.ModelLabel(); l != "" && model != "" {
		return l + "=" + strconv.Quote(model)
	}
	return ""
}

func joinMatchers(ms ...string) string {
	var out []string
	for _, m := range ms {
		if m != "" {
			out = append(out, m)
		}
	}
	return strings.Join(out, ",")
}

func braces(sel string) string {
	if sel == "" {
		return ""
	}
	return "{" + sel + "}"
}

// scaled converts a query's value from the exposed unit to seconds.
func scaled(a engines.Alias, q string) string {
	if f := a.Factor(); f != 1 {
		return "(" + q + ") * " + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return q
}
