package promql

import (
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/tokentop/tokentop/telemetry"
)

// Labels with a meaning in query results (see the package documentation).
const (
	engineTag      = "tokentop_engine" // which metric family answered: vllm, sglang, tokentop
	partTag        = "tokentop_part"   // "sum": the histogram's _sum; "series": how many series are summed
	modelNameLabel = "model_name"
	modelLabel     = "model"
	endpointLabel  = "endpoint"
)

// family is one set of metric names whose series define endpoints.
type family struct {
	tag    string
	engine telemetry.Engine
	// by lists the labels identifying an endpoint of this family.
	by string
	// hist maps a distribution signal to histogram base names; names
	// after the first are old names used where the first is absent.
	hist map[telemetry.Signal][]string
	// gauge maps a value signal to an expression; {by} stands for the
	// identifying labels plus the configured grouping labels.
	gauge map[telemetry.Signal]string
	// fresh is a series present whenever the endpoint is scraped.
	fresh string
}

// families returns the metric families of the default queries, vLLM's
// Grafana dashboard shapes for vLLM and SGLang (docs/engines.md).
func families() []family {
	return []family{
		{
			tag: "vllm", engine: telemetry.EngineVLLM, by: modelNameLabel,
			hist: map[telemetry.Signal][]string{
				telemetry.TTFT: {"vllm:time_to_first_token_seconds"},
				telemetry.TPOT: {"vllm:request_time_per_output_token_seconds"},
				telemetry.ITL:  {"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"},
				telemetry.E2E:  {"vllm:e2e_request_latency_seconds"},
			},
			gauge: map[telemetry.Signal]string{
				telemetry.Running:   `sum by ({by}) (vllm:num_requests_running)`,
				telemetry.Waiting:   `sum by ({by}) (vllm:num_requests_waiting)`,
				telemetry.KVCache:   `max by ({by}) (vllm:kv_cache_usage_perc) or max by ({by}) (vllm:gpu_cache_usage_perc)`,
				telemetry.OutputTPS: `sum by ({by}) (rate(vllm:generation_tokens_total[W]))`,
				telemetry.ErrorRate: `(sum by ({by}) (rate(vllm:request_success_total{finished_reason=~"error|abort"}[W])) or 0 * sum by ({by}) (rate(vllm:request_success_total[W]))) / sum by ({by}) (rate(vllm:request_success_total[W]))`,
			},
			fresh: "vllm:num_requests_running",
		},
		{
			tag: "sglang", engine: telemetry.EngineSGLang, by: modelNameLabel,
			hist: map[telemetry.Signal][]string{
				telemetry.TTFT: {"sglang:time_to_first_token_seconds"},
				telemetry.ITL:  {"sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"},
				telemetry.E2E:  {"sglang:e2e_request_latency_seconds"},
			},
			gauge: map[telemetry.Signal]string{
				telemetry.Running:   `sum by ({by}) (sglang:num_running_reqs)`,
				telemetry.Waiting:   `sum by ({by}) (sglang:num_queue_reqs)`,
				telemetry.KVCache:   `max by ({by}) (sglang:token_usage)`,
				telemetry.OutputTPS: `sum by ({by}) (rate(sglang:generation_tokens_total[W]))`,
				telemetry.ErrorRate: `(sum by ({by}) (rate(sglang:num_aborted_requests_total[W])) or 0 * sum by ({by}) (rate(sglang:num_requests_total[W]))) / sum by ({by}) (rate(sglang:num_requests_total[W]))`,
			},
			fresh: "sglang:num_running_reqs",
		},
		{
			// tokentop's own exporter: a fleet of tokentop probes.
			tag: "tokentop", engine: telemetry.EngineUnknown, by: endpointLabel + ", " + modelLabel,
			hist: map[telemetry.Signal][]string{
				telemetry.TTFT: {"tokentop_probe_ttft_seconds"},
				telemetry.TPOT: {"tokentop_probe_tpot_seconds"},
				telemetry.ITL:  {"tokentop_probe_itl_seconds"},
				telemetry.E2E:  {"tokentop_probe_e2e_seconds"},
			},
			fresh: "tokentop_probe_ttft_seconds_count",
		},
	}
}

// dcgmQuery joins GPU memory-bandwidth utilisation to endpoints by the
// grouping labels; values above 1 are DCGM's "no value" sentinels.
const dcgmQuery = `avg by ($GROUP) (DCGM_FI_PROF_DRAM_ACTIVE <= 1)`

// DefaultQueries returns the default query of every signal, as templates.
// Placeholders, substituted before each query:
//
//	[W]      [<Window>], the rate() range of gauges, e.g. [5m]
//	[R]      [<HistogramStep>], the histogram step, e.g. [15s]
//	$Q       the configured quantile, e.g. 0.99 (for custom quantile queries)
//	$GROUP   the grouping labels, "instance, namespace" ("" when none)
//	$_GROUP  the same with a leading comma, ", instance, namespace"
//
// Distribution signals (TTFT, TPOT, ITL, E2E) default to the cumulative
// sum by (le, <labels>) (<histogram>_bucket), evaluated every R and
// differenced by tokentop, plus the _sum (tokentop_part="sum") and the
// number of series summed (tokentop_part="series"), for vLLM (with
// old-name fallbacks), SGLang and tokentop's exporter; each family is
// tagged with its name in label tokentop_engine. Gauges follow the vLLM
// Grafana dashboard (max by, then or for the old name).
func DefaultQueries() map[telemetry.Signal]string {
	parts := map[telemetry.Signal][]string{}
	var order []telemetry.Signal
	add := func(sig telemetry.Signal, expr string) {
		if _, ok := parts[sig]; !ok {
			order = append(order, sig)
		}
		parts[sig] = append(parts[sig], expr)
	}
	for _, f := range families() {
		by := f.by + "$_GROUP"
		for _, sig := range telemetry.Signals {
			if names, ok := f.hist[sig]; ok {
				add(sig, tagged(histogramExpr(names, by), f.tag))
			}
			if g, ok := f.gauge[sig]; ok {
				add(sig, tagged(strings.ReplaceAll(g, "{by}", by), f.tag))
			}
		}
	}
	out := make(map[telemetry.Signal]string, len(order)+1)
	for _, sig := range order {
		out[sig] = strings.Join(parts[sig], " or ")
	}
	out[telemetry.GPUMemBW] = dcgmQuery
	return out
}

// DefaultFreshnessQuery returns the default FreshnessQuery: per endpoint,
// the timestamp of its newest sample.
func DefaultFreshnessQuery() string {
	var parts []string
	for _, f := range families() {
		parts = append(parts, tagged("max by ("+f.by+"$_GROUP) (timestamp("+f.fresh+"))", f.tag))
	}
	return strings.Join(parts, " or ")
}

// histogramExpr returns the cumulative bucket counters of the first
// present name, summed per endpoint, with the summed _sum tagged
// tokentop_part="sum" and the number of summed series (count of _count)
// tagged tokentop_part="series". Each name is aggregated before `or`, so
// the old name is used only for endpoints without the new one.
func histogramExpr(names []string, by string) string {
	alt := func(agg, grouping, suffix string) string {
		var alts []string
		for _, n := range names {
			alts = append(alts, agg+" by ("+grouping+") ("+n+suffix+")")
		}
		return strings.Join(alts, " or ")
	}
	return alt("sum", "le, "+by, "_bucket") +
		` or label_replace(` + alt("sum", by, "_sum") + `, "` + partTag + `", "sum", "", "")` +
		` or label_replace(` + alt("count", by, "_count") + `, "` + partTag + `", "series", "", "")`
}

func tagged(expr, tag string) string {
	return `label_replace(` + expr + `, "` + engineTag + `", "` + tag + `", "", "")`
}

// familySet indexes families by tag; built once per Source.
type familySet map[string]family

func newFamilySet() familySet {
	fs := familySet{}
	for _, f := range families() {
		fs[f.tag] = f
	}
	return fs
}

// supports reports whether the default queries cover sig for a family,
// i.e. whether its absence means "no data" rather than "not measured".
func (fs familySet) supports(tag string, sig telemetry.Signal) bool {
	f, ok := fs[tag]
	if !ok {
		return false
	}
	_, h := f.hist[sig]
	_, g := f.gauge[sig]
	return h || g
}

// expander substitutes the placeholders of query templates.
type expander struct{ r *strings.Replacer }

func newExpander(window, step time.Duration, q float64, group []string) expander {
	g := strings.Join(group, ", ")
	g2 := ""
	if g != "" {
		g2 = ", " + g
	}
	return expander{strings.NewReplacer(
		"[W]", "["+promDuration(window)+"]",
		"[R]", "["+promDuration(step)+"]",
		"$Q", strconv.FormatFloat(q, 'g', -1, 64),
		"$_GROUP", g2,
		"$GROUP", g,
	)}
}

func (e expander) expand(tmpl string) string { return e.r.Replace(tmpl) }

// promDuration formats d as a PromQL duration (5m, 30s, 1m30s, 500ms).
func promDuration(d time.Duration) string { return model.Duration(d).String() }
