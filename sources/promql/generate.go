package promql

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/telemetry"
)

// Tags the generated queries add to result series (see the package doc).
const (
	scaleTag   = "ttftop_scale"   // histogram bounds and _sum × this (ms, µs buckets)
	derivedTag = "ttftop_derived" // the value is derived (engines.Derivation.Tag)
	meanTag    = "ttftop_mean"    // the value is a mean of two counters over [W]
)

// querySet is one refresh's queries: per signal, range queries of
// cumulative histograms (differenced into windows) and/or instant queries
// of values, and the freshness queries. All are templates for the
// expander. A signal's query is split into several (by family) only where
// one would exceed maxQueryBytes; their answers are merged (mergeAnswers),
// and their number depends on the engines, never on the endpoints.
type querySet struct {
	hist  map[telemetry.Signal][]string
	value map[telemetry.Signal][]string
	fresh []string
	// kv reads KV-cache capacity and live tokens for the MBU estimate
	// (mbu.go); run only when a configured model has a KV term.
	kv []string
	// lora reads the engines' LoRA info gauges (lora.go).
	lora []string
}

// maxQueryBytes keeps every query under VictoriaMetrics' default
// -search.maxQueryLen (16384), with room for the placeholders' expansion.
const maxQueryBytes = 14000

// chunks joins expressions with or into as few queries as fit
// maxQueryBytes (an expression longer than that stays alone).
func chunks(parts []string) []string {
	var out []string
	cur := ""
	for _, p := range parts {
		switch {
		case cur == "":
			cur = p
		case len(cur)+len(" or ")+len(p) <= maxQueryBytes:
			cur += " or " + p
		default:
			out = append(out, cur)
			cur = p
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// generator writes the default queries of a set of families.
type generator struct {
	groupBy  []string
	replicas []string // replica labels not in groupBy
	roles    []string // Config.RoleLabels
}

func newGenerator(groupBy, replicaLabels, roles []string) generator {
	g := generator{groupBy: groupBy, roles: roles}
	in := map[string]bool{}
	for _, l := range groupBy {
		in[l] = true
	}
	for _, l := range replicaLabels {
		if !in[l] {
			g.replicas = append(g.replicas, l)
		}
	}
	return g
}

// by returns a family's grouping labels: its model (or job, or endpoint)
// labels, the replica labels when replica is set, then Config.GroupBy.
func (g generator) by(f *family, replica bool) string {
	var ls []string
	ls = append(ls, f.modelLabels...)
	if f.identLabel != "" {
		ls = append(ls, f.identLabel)
	}
	if f.labelless() {
		ls = append(ls, "job")
	}
	if replica {
		ls = append(ls, g.replicas...)
	}
	ls = append(ls, g.groupBy...)
	ls = append(ls, g.roles...)
	seen := map[string]bool{}
	out := ls[:0]
	for _, l := range ls {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return strings.Join(out, ", ")
}

// generate returns the default queries of fams: O(signals) queries, each
// covering every family and endpoint.
func (g generator) generate(fams []*family) querySet {
	qs := querySet{hist: map[telemetry.Signal][]string{}, value: map[telemetry.Signal][]string{}}
	hist := map[telemetry.Signal][]string{}
	value := map[telemetry.Signal][]string{}
	var order []telemetry.Signal
	seen := map[telemetry.Signal]bool{}
	note := func(sig telemetry.Signal) {
		if !seen[sig] {
			seen[sig] = true
			order = append(order, sig)
		}
	}
	var fresh, kv, lora []string
	for _, f := range fams {
		rep := g.by(f, true)
		for _, sig := range signalOrder(f.spec) {
			note(sig)
			if h := g.histExpr(f, f.spec.Signals[sig], rep); h != "" {
				hist[sig] = append(hist[sig], tagged(h, f.tag))
			}
			if v := g.valueExprs(f, sig); v != "" {
				value[sig] = append(value[sig], v)
			}
		}
		for _, d := range engines.Derivations() {
			if v := g.derivedExprs(f, d); v != "" {
				note(d.Signal)
				value[d.Signal] = append(value[d.Signal], v)
			}
		}
		if len(f.spec.Errors) > 0 {
			note(telemetry.ErrorRate)
			value[telemetry.ErrorRate] = append(value[telemetry.ErrorRate],
				tagged(g.errorExpr(f, rep)+" or "+g.errorExpr(f, g.by(f, false)), f.tag))
		}
		fresh = append(fresh, tagged(g.freshExpr(f, rep), f.tag))
		if k := g.kvInfoExpr(f, rep); k != "" {
			kv = append(kv, k)
		}
		if l := g.loraExpr(f); l != "" {
			lora = append(lora, l)
		}
	}
	for _, sig := range order {
		if len(hist[sig]) > 0 {
			qs.hist[sig] = chunks(hist[sig])
		}
		if len(value[sig]) > 0 {
			qs.value[sig] = chunks(value[sig])
		}
	}
	qs.value[telemetry.GPUMemBW] = []string{g.gpuExpr()}
	qs.value[telemetry.GPUPower] = []string{g.gpuPowerExpr()}
	qs.fresh = chunks(fresh)
	qs.kv = chunks(kv)
	qs.lora = chunks(lora)
	return qs
}

// selector is a family's series name with the alias' label matchers.
func selector(name string, match map[string]string, extra string) string {
	keys := make([]string, 0, len(match))
	for k := range match {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var ms []string
	for _, k := range keys {
		ms = append(ms, k+"="+strconv.Quote(match[k]))
	}
	if extra != "" {
		ms = append(ms, extra)
	}
	if len(ms) == 0 {
		return name
	}
	return name + "{" + strings.Join(ms, ", ") + "}"
}

// claimed restricts an instant-vector expression of the raw series of one
// name to the targets the family owns, when another family reads that name
// too (see family.claim); Dynamo's trtllm_ names are TensorRT-LLM's alone.
func (f *family) claimed(series, inner string) string {
	if f.claim == "" || !f.shared[series] {
		return inner
	}
	return "((" + inner + ")" + f.claim + ")"
}

// presence is the set of endpoints (grouped by by) where alias a has
// series: an earlier alias present there wins over later ones.
func (f *family) presence(a engines.Alias, by string) string {
	if a.PageWide {
		return "group by (" + by + ") (" + pageWideExpr(f, a, by) + ")"
	}
	name := a.Name
	switch a.Type {
	case engines.Histogram, engines.HistogramSum:
		name = a.Count()
	}
	return "group by (" + by + ") (" + f.claimed(name, selector(name, a.Match, "")) + ")"
}

// presenceOver is the set of endpoints where alias a had series at any
// time in the rate window [W]. A derived value is a rate over [W], which
// answers for up to W after the target's last sample: checking presence
// at the instant only would let it stand in for a histogram that went
// stale (target down) a moment ago.
func (f *family) presenceOver(a engines.Alias, by string) string {
	name := a.Name
	switch a.Type {
	case engines.Histogram, engines.HistogramSum:
		name = a.Count()
	}
	return "group by (" + by + ") (" + f.claimed(name, "last_over_time("+selector(name, a.Match, "")+"[W])") + ")"
}

// preferred applies the alias table's preference order per endpoint: the
// expression of alias i counts only where aliases 0…i−1 have no series.
func preferred(f *family, aliases []engines.Alias, i int, by, expr string) string {
	if i == 0 {
		return expr
	}
	var earlier []string
	for _, a := range aliases[:i] {
		earlier = append(earlier, f.presence(a, by))
	}
	return "(" + expr + " unless on(" + by + ") (" + strings.Join(earlier, " or ") + "))"
}

// histExpr returns, for the histogram aliases of one signal, the cumulative
// buckets summed per endpoint (sum by (le, …)), the summed _sum
// (ttftop_part="sum") and the number of series summed (count of _count,
// ttftop_part="series"); "" when the signal has no histogram alias.
func (g generator) histExpr(f *family, aliases []engines.Alias, by string) string {
	var parts []string
	for i, a := range aliases {
		if a.Type != engines.Histogram {
			continue
		}
		scale := func(e string) string {
			if a.Factor() == 1 {
				return e
			}
			return labelTag(e, scaleTag, strconv.FormatFloat(a.Factor(), 'g', -1, 64))
		}
		sel := func(n string) string { return f.claimed(n, selector(n, a.Match, "")) }
		parts = append(parts,
			scale(preferred(f, aliases, i, by, "sum by (le, "+by+") ("+sel(a.Bucket())+")")),
			labelTag(scale(preferred(f, aliases, i, by, "sum by ("+by+") ("+sel(a.Sum())+")")), partTag, "sum"),
			labelTag(preferred(f, aliases, i, by, "count by ("+by+") ("+sel(a.Count())+")"), partTag, "series"))
	}
	return strings.Join(parts, " or ")
}

// valueExprs returns a family's instant query of one signal: per replica,
// and per aggregate (the model's replicas combined by the server, with the
// same aggregation), tagged with the family.
func (g generator) valueExprs(f *family, sig telemetry.Signal) string {
	one := func(by string) string {
		aliases := f.spec.Signals[sig]
		var parts []string
		for i, a := range aliases {
			if e := valueExpr(f, a, by, sig.Info().Distribution); e != "" {
				parts = append(parts, preferred(f, aliases, i, by, e))
			}
		}
		return strings.Join(parts, " or ")
	}
	rep := one(g.by(f, true))
	if rep == "" {
		return ""
	}
	return tagged(rep+" or "+one(g.by(f, false)), f.tag)
}

// valueExpr reads one non-histogram alias as a value per endpoint. A
// counter ratio is tagged a mean (approximate) when mean is set: where it
// stands in for a distribution (Triton's queue time), as direct scrape
// marks it; the hit and acceptance ratios and shares are exact counts.
func valueExpr(f *family, a engines.Alias, by string, mean bool) string {
	rate := func(name string, match map[string]string) string {
		return "sum by (" + by + ") (" + f.claimed(name, afreshRate(selector(name, match, ""))) + ")"
	}
	var e string
	switch a.Type {
	case engines.Gauge:
		if a.PageWide {
			e = pageWideExpr(f, a, by)
			break
		}
		e = promAgg(a.Agg) + " by (" + by + ") (" + f.claimed(a.Name, selector(a.Name, a.Match, "")) + ")"
	case engines.Counter:
		e = promAgg(a.Agg) + " by (" + by + ") (" + f.claimed(a.Name, afreshRate(selector(a.Name, a.Match, ""))) + ")"
	case engines.HistogramSum:
		e = rate(a.Sum(), a.Match)
	case engines.CounterRatio:
		e = "(" + rate(a.Name, a.Match) + " / " + rate(a.Per, nil) + ")"
	case engines.CounterShare:
		// 0 / 0 (no lookups) is NaN: no data, as in direct scrape.
		hits := rate(a.Name, a.Match)
		e = "(" + hits + " / (" + hits + " + " + rate(a.Per, nil) + "))"
	default:
		return ""
	}
	if mean && a.TwoCounters() {
		e = labelTag(e, meanTag, a.Type.String())
	}
	if a.Factor() != 1 {
		e = "(" + e + " * " + strconv.FormatFloat(a.Factor(), 'g', -1, 64) + ")"
	}
	if a.Offset != 0 {
		e = "(" + e + " + " + strconv.FormatFloat(a.Offset, 'g', -1, 64) + ")"
	}
	return e
}

// afreshRate is rate(sel[W]) started afresh at a counter reset (an engine
// restarted, restarts.go): while a reset lies in [W], the counter's value,
// which counts from zero at the restart, over W. Prometheus' rate() would
// add the count before the reset and divide by W, averaging the old life,
// the gap and the new one. Like a new series' rate on Prometheus it reads
// low until the reset leaves the window (marked young, young.go); a ratio
// of two such rates is the new life's. Per series, before any sum.
func afreshRate(sel string) string {
	reset := "resets(" + sel + "[W]) > 0"
	return "((rate(" + sel + "[W]) unless " + reset + ") or (" + sel + " / $W_SECONDS and " + reset + "))"
}

// promAgg is PromQL's aggregation for an alias's Agg.
func promAgg(a engines.Agg) string {
	switch a {
	case engines.Max:
		return "max"
	case engines.Mean:
		return "avg"
	}
	return "sum"
}

// derivedExprs returns the derived value of d.Signal for the family's
// endpoints that have had no series of its own aliases, nor of those of
// d.Unless (spec decoding), in [W]: the mean of
// d.From's histogram over [W], tagged ttftop_derived.
func (g generator) derivedExprs(f *family, d engines.Derivation) string {
	from := d.Of(f.spec)
	if len(from) == 0 {
		return ""
	}
	one := func(by string) string {
		var parts []string
		for i, a := range from {
			rate := func(n string) string {
				return "sum by (" + by + ") (" + f.claimed(n, afreshRate(selector(n, a.Match, ""))) + ")"
			}
			e := "(" + rate(a.Sum()) + " / " + rate(a.Count()) + ")"
			if a.Factor() != 1 {
				e = "(" + e + " * " + strconv.FormatFloat(a.Factor(), 'g', -1, 64) + ")"
			}
			parts = append(parts, preferred(f, from, i, by, e))
		}
		e := strings.Join(parts, " or ")
		if ex := d.Excluded(f.spec); len(ex) > 0 {
			var pres []string
			for _, a := range ex {
				pres = append(pres, f.presenceOver(a, by))
			}
			e = "((" + e + ") unless on(" + by + ") (" + strings.Join(pres, " or ") + "))"
		}
		return e
	}
	return tagged(labelTag(one(g.by(f, true))+" or "+one(g.by(f, false)), derivedTag, d.Tag), f.tag)
}

// errorExpr is failed / all requests over [W] per endpoint, from the first
// of the engine's error counters present; 0/0 is NaN (no data).
func (g generator) errorExpr(f *family, by string) string {
	var parts []string
	ecs := f.spec.Errors
	for i, ec := range ecs {
		rate := func(name, extra string) string {
			return "sum by (" + by + ") (" + f.claimed(name, afreshRate(selector(name, nil, extra))) + ")"
		}
		failed := rate(ec.Failed, failedMatcher(ec))
		var e string
		if ec.All != "" {
			all := rate(ec.All, "")
			e = "(" + failed + " or 0 * " + all + ") / " + all
		} else {
			ok := rate(ec.Succeeded, "")
			f0 := "(" + failed + " or 0 * " + ok + ")"
			s0 := "(" + ok + " or 0 * " + failed + ")"
			e = f0 + " / (" + f0 + " + " + s0 + ")"
		}
		e = "(" + e + ")"
		if i > 0 {
			var earlier []string
			for _, p := range ecs[:i] {
				earlier = append(earlier, "group by ("+by+") ("+f.claimed(p.Failed, selector(p.Failed, nil, ""))+")")
			}
			e = "(" + e + " unless on(" + by + ") (" + strings.Join(earlier, " or ") + "))"
		}
		parts = append(parts, e)
	}
	return strings.Join(parts, " or ")
}

// failedMatcher is the label matcher of an engine's failed requests, ""
// when every series of ec.Failed counts. Its regular expression matches
// the values exactly (PromQL's regex is RE2, anchored, like Go's):
// LMDeploy's "ResponseType.CANCEL" must not match "ResponseTypeXCANCEL".
func failedMatcher(ec engines.ErrorCounters) string {
	if ec.FailedLabel == "" {
		return ""
	}
	quoted := make([]string, len(ec.FailedValues))
	for i, v := range ec.FailedValues {
		quoted[i] = regexp.QuoteMeta(v)
	}
	return ec.FailedLabel + "=~" + strconv.Quote(strings.Join(quoted, "|"))
}

// freshExpr is, per replica, the timestamp of its newest sample of the
// series the family reads (one per alias: a histogram's _count). Each
// name's timestamp() is taken alone (it drops the name, so one selector of
// several names would clash) and joined with or: the series of one target
// carry its scrape's timestamp.
func (g generator) freshExpr(f *family, by string) string {
	var ts []string
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			ts = append(ts, f.claimed(n, "timestamp("+n+")"))
		}
	}
	for _, sig := range signalOrder(f.spec) {
		for _, a := range f.spec.Signals[sig] {
			switch a.Type {
			case engines.Histogram, engines.HistogramSum:
				add(a.Count())
			default:
				add(a.Name)
			}
		}
	}
	for _, ec := range f.spec.Errors {
		add(ec.Failed)
	}
	return "max by (" + by + ") (" + strings.Join(ts, " or ") + ")"
}

// discoveryMatch selects, for the metric-name listing, every series name
// any family reads, and DCGM's.
func discoveryMatch(fams []*family) string {
	var names []string
	for _, f := range fams {
		names = append(names, f.series...)
	}
	sort.Strings(names)
	out := names[:0]
	for i, n := range names {
		if i == 0 || n != names[i-1] {
			out = append(out, n)
		}
	}
	return `{__name__=~"` + strings.Join(out, "|") + `|DCGM_FI_.+"}`
}

func tagged(expr, tag string) string { return labelTag(expr, engineTag, tag) }

func labelTag(expr, label, value string) string {
	return `label_replace(` + expr + `, "` + label + `", "` + value + `", "", "")`
}
