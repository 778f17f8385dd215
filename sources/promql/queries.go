package promql

import (
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// Labels with a meaning in query results (see the package documentation).
const (
	engineTag      = "ttftop_engine" // which family answered: an engine of engines.All(), ttftop, dcgm
	partTag        = "ttftop_part"   // "sum": the histogram's _sum; "series": how many series are summed
	modelNameLabel = "model_name"
	modelLabel     = "model"
	endpointLabel  = "endpoint"
)

// gpuJoinLabels are the labels GPU series are joined to endpoints by
// (gpu.go): dcgm-exporter's Hostname and Kubernetes pod mapping (pod,
// namespace; exported_* when Prometheus renamed them), and the instance.
func gpuJoinLabels() []string {
	return []string{"Hostname", "instance", "pod", "namespace", "exported_pod", "exported_namespace"}
}

// gpuBy is the GPU queries' grouping: the join labels and Config.GroupBy.
func (g generator) gpuBy() string {
	seen := map[string]bool{}
	var ls []string
	for _, l := range append(gpuJoinLabels(), g.groupBy...) {
		if !seen[l] {
			seen[l] = true
			ls = append(ls, l)
		}
	}
	return strings.Join(ls, ", ")
}

// gpuOnce keeps one series per GPU of metric: the one with the newest
// sample of those with the same UUID (and MIG instance, GPU_I_ID) on the
// same host (the instance's, port left out: hostTag while grouping). A
// GPU whose series changed labels inside the window (a relabel, an
// exporter restarted with new labels) has an old and a new series, both
// answering rate() over [W]: counted twice without this. Series without
// a UUID are all kept (nothing says they are the same GPU).
func gpuOnce(metric string) string {
	byHost := `label_replace(timestamp(` + metric + `{UUID!=""}), "` + hostTag + `", "$1", "instance", "(.*):[^:]*")`
	newest := "topk by (UUID, GPU_I_ID, " + hostTag + ") (1, " + byHost + ")"
	return `(label_replace(` + newest + `, "` + hostTag + `", "", "", "") or timestamp(` + metric + `{UUID=""}))`
}

// hostTag holds a GPU series' host while gpuOnce groups them.
const hostTag = "ttftop_host"

// gpuExpr is the GPU memory-bandwidth query: the mean DCGM DRAM-active
// ratio per host or pod, with the number of GPUs averaged
// (ttftop_part="series"), each GPU once (gpuOnce); values above 1 are
// DCGM's "no value" sentinels.
func (g generator) gpuExpr() string {
	by := g.gpuBy()
	const metric = "DCGM_FI_PROF_DRAM_ACTIVE"
	dram := "(" + metric + " <= 1 and " + gpuOnce(metric) + ")"
	return tagged("avg by ("+by+") "+dram+" or "+labelTag("count by ("+by+") "+dram, partTag, "series"), gpuTag)
}

// maxGPUWatts bounds one GPU's power: above it a figure is a DCGM "no
// value" sentinel (1.4e14 for floats), never a draw.
const maxGPUWatts = "100000"

// gpuAgePart tags the part of the power query that dates each host's or
// pod's youngest energy series (seconds since its first sample, to within
// a step R): rate() over [W] of a series younger than W reads low on
// Prometheus (young.go).
const gpuAgePart = "age"

// gpuPowerExpr is the GPU power query: watts summed over the GPUs of each
// host or pod (joinGPU sums the groups, power adds up), each GPU once
// (gpuOnce). Each GPU's power is its energy counter's rate over [W]
// (mJ/s ÷ 1000) where the counter has a rate above 0, else its sampled
// draw: a GPU never draws 0 W, so an unchanged counter (dcgm-exporter
// collects every 30s by default; a window shorter than that can hold no
// change) is not zero power. The part tagged gpuAgePart is the age of
// the youngest energy series of each host or pod.
func (g generator) gpuPowerExpr() string {
	const counter = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
	const draw = "DCGM_FI_DEV_POWER_USAGE"
	by := g.gpuBy()
	energy := "(rate(" + counter + "[W]) > 0 and " + gpuOnce(counter) + ")"
	perGPU := "((" + energy + " / 1000 < " + maxGPUWatts + ") or ((" + draw + " < " + maxGPUWatts + " unless " + energy + ") and " + gpuOnce(draw) + "))"
	age := "time() - min by (" + by + ") (min_over_time(timestamp(" + counter + ")[W:R]) and " + energy + ")"
	return tagged("sum by ("+by+") "+perGPU+" or "+labelTag(age, partTag, gpuAgePart), gpuTag)
}

// gpuTag marks the GPU query's series (they name no endpoint: gpu.go joins
// them).
const gpuTag = "dcgm"

// expander substitutes the placeholders of query templates, default and
// custom (Config.Queries, FreshnessQuery):
//
//	[W]      [<Window>], the rate() range, e.g. [5m]
//	[R]      [<HistogramStep>], the histogram step, e.g. [15s]
//	[W:R]    [<Window>:<HistogramStep>], a subquery over W at steps R
//	$W_SECONDS  the window in seconds, e.g. 300
//	$Q       the configured quantile, e.g. 0.99
//	$GROUP   the grouping labels, "namespace, cluster" ("" when none)
//	$_GROUP  the same with a leading comma, ", namespace, cluster"
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
		"[W:R]", "["+promDuration(window)+":"+promDuration(step)+"]",
		"$W_SECONDS", strconv.FormatFloat(window.Seconds(), 'g', -1, 64),
		"$Q", strconv.FormatFloat(q, 'g', -1, 64),
		"$_GROUP", g2,
		"$GROUP", g,
	)}
}

func (e expander) expand(tmpl string) string { return e.r.Replace(tmpl) }

// promDuration formats d as a PromQL duration (5m, 30s, 1m30s, 500ms).
func promDuration(d time.Duration) string { return model.Duration(d).String() }
