package main

// probe URL1 URL2 …: an A/B comparison. Requests are interleaved, one at
// a time, the same prompt to every endpoint in an order that rotates each
// round, so slow drift (other load, thermal state, a noisy neighbour) and
// the position in the round fall on every endpoint alike. Each difference
// is given with a paired percentile-bootstrap confidence interval over
// rounds.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// A/B statistics: fixed, so a run's intervals are reproducible from its
// samples. 2000 resamples put the 2.5 % and 97.5 % points within about
// ±0.3 % of their bootstrap values (Efron & Tibshirani, ch. 13).
const (
	abResamples    = 2000
	abMinPaired    = 5 // fewer paired rounds: no interval, it would mean nothing
	abBootstrapPCG = 0x7a11ab
)

// abMetric is one figure compared between endpoints.
type abMetric struct {
	name   string // JSON and table name, unit in the suffix
	unit   string
	q      float64 // the quantile taken over the requests
	sample func(*probe.Result) (float64, bool)
	higher bool // higher is better (tok/s); else lower is
}

func abMetrics() []abMetric {
	ttft := func(r *probe.Result) (float64, bool) { return ms(r.TTFT), true }
	tpot := func(r *probe.Result) (float64, bool) {
		v, ok := r.TPOT()
		return ms(v), ok
	}
	e2e := func(r *probe.Result) (float64, bool) { return ms(r.E2E), true }
	return []abMetric{
		{name: "ttft_p50_ms", unit: "ms", q: 0.5, sample: ttft},
		{name: "ttft_p95_ms", unit: "ms", q: 0.95, sample: ttft},
		{name: "tpot_p50_ms", unit: "ms", q: 0.5, sample: tpot},
		{name: "tpot_p95_ms", unit: "ms", q: 0.95, sample: tpot},
		{name: "e2e_p50_ms", unit: "ms", q: 0.5, sample: e2e},
		{name: "e2e_p95_ms", unit: "ms", q: 0.95, sample: e2e},
		{name: "decode_p50_tokens_per_s", unit: "tok/s", q: 0.5, higher: true, sample: func(r *probe.Result) (float64, bool) { return r.DecodeTPS() }},
	}
}

// abEndpointJSON is one endpoint's own figures in an A/B run.
type abEndpointJSON struct {
	Label     string             `json:"label"`
	URL       string             `json:"url"`
	API       string             `json:"api"`
	Model     string             `json:"model"`
	Completed int                `json:"completed"`
	Failed    int                `json:"failed"`
	Figures   map[string]float64 `json:"figures"` // metric name → value; absent when not measured
	Requests  []probeRequestJSON `json:"requests,omitempty"`
}

// abDiffJSON is one metric's difference, endpoint − baseline.
type abDiffJSON struct {
	Metric   string   `json:"metric"`
	Unit     string   `json:"unit"`
	Baseline *float64 `json:"baseline"`
	Value    *float64 `json:"value"`
	// Difference is Value − Baseline over the paired rounds; CILow and
	// CIHigh bound it (null with fewer than abMinPaired paired rounds).
	Difference *float64 `json:"difference"`
	CILow      *float64 `json:"ci_low"`
	CIHigh     *float64 `json:"ci_high"`
	Relative   *float64 `json:"relative_ratio,omitempty"` // Difference / Baseline
	// Verdict: "better", "worse" or "no difference shown" (the CI holds 0).
	Verdict      string `json:"verdict"`
	PairedRounds int    `json:"paired_rounds"`
}

// abComparisonJSON compares one endpoint with the baseline.
type abComparisonJSON struct {
	Endpoint string       `json:"endpoint"`
	Baseline string       `json:"baseline"`
	Metrics  []abDiffJSON `json:"metrics"`
}

// abReportJSON is what `probe URL1 URL2 … --json` prints.
type abReportJSON struct {
	Schema      string             `json:"schema"`
	Rounds      int                `json:"rounds"`
	Order       string             `json:"order"`
	CIMethod    string             `json:"ci_method"`
	CILevel     float64            `json:"ci_level_ratio"`
	DurationMS  float64            `json:"duration_ms"`
	Endpoints   []abEndpointJSON   `json:"endpoints"`
	Comparisons []abComparisonJSON `json:"comparisons"`
}

const (
	abOrder    = "one request at a time; round r sends to endpoint (r + k) mod N as its k-th request, the same prompt to each"
	abCIMethod = "paired percentile bootstrap over rounds in which both requests succeeded (2000 resamples, fixed seed)"
)

// runProbeAB probes cfg.urls in interleaved rounds and prints the
// comparison. It fails when an endpoint cannot be probed at all.
func runProbeAB(ctx context.Context, cfg probeConfig, stdout io.Writer, note func(string, ...any)) error {
	probers := make([]*probe.Prober, 0, len(cfg.urls))
	defer func() {
		for _, p := range probers {
			p.Close()
		}
	}()
	for _, u := range cfg.urls {
		o := cfg.opts
		o.URL = u
		p, err := probe.New(o)
		if err != nil {
			return fmt.Errorf("%s: %w", u, err)
		}
		probers = append(probers, p)
		dctx, cancel := context.WithTimeout(ctx, p.Options().Timeout)
		models, err := p.Discover(dctx)
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", u, err)
		}
		if o.Model == "" && len(models) > 1 {
			note("%s: found %d models; probing %s; choose with --model\n", u, len(models), p.Model())
		}
		if o.Prewarm {
			if err := p.Prewarm(ctx, 1); err != nil {
				note("%s: prewarm: %v\n", u, err)
			}
		}
	}
	start := time.Now()
	results := abRounds(ctx, probers, cfg.n)
	rep := abReport(probers, results, cfg.format == "json", cfg.confidence)
	rep.DurationMS = ms(time.Since(start))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var err error
	if cfg.format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = writeABTable(stdout, rep, cfg)
	}
	if err != nil {
		return err
	}
	for _, e := range rep.Endpoints {
		if e.Completed == 0 {
			return fmt.Errorf("%s (%s): all %d requests failed", e.Label, e.URL, e.Failed)
		}
	}
	return nil
}

// abRounds sends n rounds; results[i][r] is endpoint i's request in round
// r (nil when ctx ended first). Each endpoint's own limits hold: no start
// before its --request-interval and --max-rpm allow.
func abRounds(ctx context.Context, probers []*probe.Prober, n int) [][]*probe.Result {
	results := make([][]*probe.Result, len(probers))
	next := make([]time.Time, len(probers))
	for i := range results {
		results[i] = make([]*probe.Result, n)
	}
	for r := range n {
		for k := range probers {
			i := (r + k) % len(probers)
			if !sleepUntil(ctx, next[i]) {
				return results
			}
			o := probers[i].Options()
			next[i] = time.Now().Add(max(o.Interval, time.Minute/time.Duration(max(o.Limits.MaxPerMinute, 1))))
			res := probers[i].Do(ctx, nil)
			res.Seq = r + 1
			results[i][r] = res
		}
	}
	return results
}

// sleepUntil waits for t or ctx; false when ctx ended.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// abLabel names endpoint i: A, B, C, …
func abLabel(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprintf("E%d", i+1)
}

func abReport(probers []*probe.Prober, results [][]*probe.Result, withRequests bool, level float64) abReportJSON {
	rounds := 0
	if len(results) > 0 {
		rounds = len(results[0])
	}
	rep := abReportJSON{Schema: telemetry.JSONSchema, Rounds: rounds, Order: abOrder, CIMethod: abCIMethod, CILevel: level}
	metrics := abMetrics()
	for i, p := range probers {
		e := abEndpointJSON{Label: abLabel(i), URL: p.URL(), API: string(p.API()), Model: p.Model(), Figures: map[string]float64{}}
		for _, r := range results[i] {
			switch {
			case r == nil:
				continue
			case r.OK:
				e.Completed++
			default:
				e.Failed++
			}
			if withRequests {
				e.Requests = append(e.Requests, probeRequestOf(r))
			}
		}
		for _, m := range metrics {
			if v, ok := quantileOf(m, results[i]); ok {
				e.Figures[m.name] = v
			}
		}
		rep.Endpoints = append(rep.Endpoints, e)
	}
	rng := rand.New(rand.NewPCG(abBootstrapPCG, abBootstrapPCG))
	for i := 1; i < len(probers); i++ {
		c := abComparisonJSON{Endpoint: abLabel(i), Baseline: abLabel(0)}
		for _, m := range metrics {
			c.Metrics = append(c.Metrics, abDiff(m, results[0], results[i], level, rng))
		}
		rep.Comparisons = append(rep.Comparisons, c)
	}
	return rep
}

// quantileOf is metric m over the successful requests of one endpoint.
func quantileOf(m abMetric, rs []*probe.Result) (float64, bool) {
	var v []float64
	for _, r := range rs {
		if r != nil && r.OK {
			if x, ok := m.sample(r); ok {
				v = append(v, x)
			}
		}
	}
	if len(v) == 0 {
		return 0, false
	}
	return telemetry.SampleQuantile(m.q, v), true
}

// abDiff is metric m of b minus a over the rounds where both measured it,
// with its bootstrap interval: resample the paired rounds with
// replacement, take the metric of each side over the resample, and read
// the interval from the spread of the differences.
func abDiff(m abMetric, a, b []*probe.Result, level float64, rng *rand.Rand) abDiffJSON {
	var xa, xb []float64
	for r := range min(len(a), len(b)) {
		if a[r] == nil || b[r] == nil || !a[r].OK || !b[r].OK {
			continue
		}
		va, oka := m.sample(a[r])
		vb, okb := m.sample(b[r])
		if oka && okb {
			xa, xb = append(xa, va), append(xb, vb)
		}
	}
	unit, _ := telemetry.JSONUnit(m.unit) // the metric's name ends in it
	d := abDiffJSON{Metric: m.name, Unit: unit, PairedRounds: len(xa), Verdict: "not measured"}
	if len(xa) == 0 {
		return d
	}
	qa := telemetry.SampleQuantile(m.q, slices.Clone(xa))
	qb := telemetry.SampleQuantile(m.q, slices.Clone(xb))
	diff := qb - qa
	d.Baseline, d.Value, d.Difference = ptr(qa), ptr(qb), ptr(diff)
	if qa != 0 {
		d.Relative = ptr(diff / qa)
	}
	if len(xa) < abMinPaired {
		d.Verdict = fmt.Sprintf("too few paired rounds for an interval (%d < %d)", len(xa), abMinPaired)
		return d
	}
	lo, hi := bootstrapCI(xa, xb, m.q, level, rng)
	d.CILow, d.CIHigh = ptr(lo), ptr(hi)
	switch {
	case lo > 0 && m.higher, hi < 0 && !m.higher:
		d.Verdict = "better"
	case lo > 0, hi < 0:
		d.Verdict = "worse"
	default:
		d.Verdict = "no difference shown"
	}
	return d
}

// bootstrapCI is the level (e.g. 0.95) percentile interval of
// quantile(q, b) − quantile(q, a) over resampled pairs.
func bootstrapCI(a, b []float64, q, level float64, rng *rand.Rand) (lo, hi float64) {
	n := len(a)
	ra, rb := make([]float64, n), make([]float64, n)
	diffs := make([]float64, abResamples)
	for k := range diffs {
		for j := range n {
			i := rng.IntN(n)
			ra[j], rb[j] = a[i], b[i]
		}
		diffs[k] = telemetry.SampleQuantile(q, rb) - telemetry.SampleQuantile(q, ra)
	}
	tail := (1 - level) / 2
	slices.Sort(diffs)
	return telemetry.SampleQuantile(tail, diffs), telemetry.SampleQuantile(1-tail, diffs)
}

func writeABTable(w io.Writer, rep abReportJSON, cfg probeConfig) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "A/B probe: %d endpoints, %d rounds, max_tokens %d; order rotates each round (one request at a time)\n\n",
		len(rep.Endpoints), rep.Rounds, cfg.opts.MaxTokens)
	for _, e := range rep.Endpoints {
		fmt.Fprintf(b, "  %s  %s  api %s  model %s  completed %d  failed %d\n", e.Label, e.URL, e.API, e.Model, e.Completed, e.Failed)
	}
	b.WriteString("\n")
	metrics := abMetrics()
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "\t"
	for _, e := range rep.Endpoints {
		head += e.Label + "\t"
	}
	fmt.Fprintln(tw, head)
	for _, m := range metrics {
		row := m.name + "\t"
		for _, e := range rep.Endpoints {
			v, ok := e.Figures[m.name]
			if ok {
				row += num(&v) + "\t"
			} else {
				row += "-\t"
			}
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeABComparisons(b, rep); err != nil {
		return err
	}
	b.WriteString("\n(client-side probe figures; definitions: ttftop probe --help, docs/definitions.md)\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeABComparisons is each endpoint's differences from the baseline,
// with their intervals, one table per endpoint (probe A/B and race).
func writeABComparisons(b *strings.Builder, rep abReportJSON) error {
	for _, c := range rep.Comparisons {
		fmt.Fprintf(b, "\n%s − %s (%s%% CI: %s)\n", c.Endpoint, c.Baseline, strconv.FormatFloat(100*rep.CILevel, 'g', 4, 64), rep.CIMethod)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\tdifference\tCI low\tCI high\trelative\tpaired\t")
		for _, d := range c.Metrics {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t  %s\n", d.Metric, signed(d.Difference), signed(d.CILow), signed(d.CIHigh),
				percent(d.Relative), d.PairedRounds, d.Verdict)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func signed(p *float64) string {
	if p == nil || math.IsNaN(*p) {
		return "-"
	}
	return fmt.Sprintf("%+.2f", *p)
}

func percent(p *float64) string {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100**p)
}
