package promql

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/model"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/telemetry"
)

// Signals and aliases added to the engines table later (new Alias entries
// of existing types) are queried without a change here: each alias type
// has its query shape, the signal's kind (histogram windows or a value)
// follows from its aliases, and its absence is "no data" for the engines
// that have it.
func TestNewTableEntriesAreQueried(t *testing.T) {
	spec, _ := engines.Lookup(telemetry.EngineVLLM)
	const prefill, preempt, hit = telemetry.Signal("prefill_time"), telemetry.Signal("preemptions"), telemetry.Signal("prefix_hit")
	spec.Signals[prefill] = []engines.Alias{{Name: "vllm:request_prefill_time_seconds", Type: engines.Histogram}}
	spec.Signals[preempt] = []engines.Alias{{Name: "vllm:num_preemptions_total", Type: engines.Counter}}
	spec.Signals[hit] = []engines.Alias{{Name: "vllm:prefix_cache_hits_total", Type: engines.CounterRatio, Per: "vllm:prefix_cache_queries_total"}}
	const accept = telemetry.Signal("accept_len")
	spec.Signals[accept] = []engines.Alias{{Name: "vllm:spec_decode_num_accepted_tokens_total", Type: engines.CounterRatio,
		Per: "vllm:spec_decode_num_drafts_total", Offset: 1}}
	f := newFamily("vllm", telemetry.EngineVLLM, spec, spec.ModelLabels, "")
	qs := newGenerator(nil, []string{"pod", "instance"}, nil).generate([]*family{f})
	for sig, want := range map[telemetry.Signal]string{
		prefill: `sum by (le, model_name, pod, instance) (vllm:request_prefill_time_seconds_bucket)`,
	} {
		if q := strings.Join(qs.hist[sig], " or "); !strings.Contains(q, want) {
			t.Errorf("%s histogram query lacks %q: %s", sig, want, q)
		}
		if _, ok := qs.value[sig]; ok {
			t.Errorf("%s has a value query too", sig)
		}
	}
	for sig, want := range map[telemetry.Signal]string{
		preempt: afresh(`sum by (model_name, pod, instance) (rate(vllm:num_preemptions_total[W])) or sum by (model_name) (rate(vllm:num_preemptions_total[W]))`),
		hit:     afresh(`(sum by (model_name, pod, instance) (rate(vllm:prefix_cache_hits_total[W])) / sum by (model_name, pod, instance) (rate(vllm:prefix_cache_queries_total[W])))`),
		accept:  afresh(`/ sum by (model_name, pod, instance) (rate(vllm:spec_decode_num_drafts_total[W]))) + 1)`),
	} {
		if q := strings.Join(qs.value[sig], " or "); !strings.Contains(q, want) {
			t.Errorf("%s value query lacks %q: %s", sig, want, q)
		}
	}
	if !f.hist[prefill] || !f.value[preempt] || !f.value[hit] || f.value[prefill] {
		t.Errorf("no-data expectations: hist %v value %v", f.hist, f.value)
	}
	if got := signalsOf(qs.value); !strings.Contains(strings.Join(sigStrings(got), " "), "preemptions prefix_hit") {
		t.Errorf("extra signals not scheduled in name order after the known ones: %v", got)
	}
	if !strings.Contains(strings.Join(qs.fresh, ""), "timestamp(vllm:num_preemptions_total)") {
		t.Error("freshness does not cover the new alias")
	}
}

func sigStrings(sigs []telemetry.Signal) []string {
	out := make([]string, len(sigs))
	for i, s := range sigs {
		out[i] = string(s)
	}
	return out
}

// A signal's query too long for VictoriaMetrics is split by family, and
// the answers are merged back into one per signal: same series, first
// error kept, freshness answers left apart.
func TestSplitQueriesMerge(t *testing.T) {
	long := strings.Repeat("x", maxQueryBytes/3)
	if got := chunks([]string{long, long, "a", long}); len(got) != 2 || got[0] != long+" or "+long+" or a" || got[1] != long {
		t.Errorf("chunks: %d parts", len(got))
	}
	vec := func(v float64) model.Vector {
		return model.Vector{&model.Sample{Metric: model.Metric{"model_name": "m"}, Value: model.SampleValue(v)}}
	}
	boom := errors.New("boom")
	in := []answer{
		{job: job{kind: instantJob}, value: vec(1)},
		{job: job{kind: instantJob, signal: telemetry.Running}, value: vec(2), warnings: []string{"w1"}},
		{job: job{kind: instantJob}, value: vec(3)},
		{job: job{kind: instantJob, signal: telemetry.Running}, value: vec(4), err: boom, warnings: []string{"w2"}},
		{job: job{kind: rangeJob, signal: telemetry.Running}, value: model.Matrix{}},
	}
	out := mergeAnswers(in)
	if len(out) != 4 {
		t.Fatalf("%d answers, want 4 (two freshness, running instant, running range)", len(out))
	}
	m := out[1]
	if v := m.value.(model.Vector); len(v) != 2 || v[1].Value != 4 || m.err != boom || strings.Join(m.warnings, ",") != "w1,w2" {
		t.Errorf("merged %+v", m)
	}
}

// A per-GPU counter (bytes read per GPU, one series per data-parallel
// rank) is averaged over the ranks and replicas, as direct scrape does:
// summed, two ranks would read as one GPU moving twice the bytes.
func TestPerGPUCounterAveraged(t *testing.T) {
	spec, _ := engines.Lookup(telemetry.EngineVLLM)
	f := newFamily("vllm", telemetry.EngineVLLM, spec, spec.ModelLabels, "")
	qs := newGenerator(nil, []string{"pod", "instance"}, nil).generate([]*family{f})
	q := strings.Join(qs.value[telemetry.EngineReadBytes], " or ")
	for _, want := range []string{
		afresh(`avg by (model_name, pod, instance) (rate(vllm:estimated_read_bytes_per_gpu_total[W]))`),
		afresh(`avg by (model_name) (rate(vllm:estimated_read_bytes_per_gpu_total[W]))`),
	} {
		if !strings.Contains(q, want) {
			t.Errorf("read-bytes query lacks %q: %s", want, q)
		}
	}
}

// A hit rate over a sum (CounterShare) is hits / (hits + the other
// outcome) per endpoint, both rated over [W] by the same labels; like
// every diagnosis ratio it is exact counts, not tagged a mean.
func TestCounterShareQuery(t *testing.T) {
	for _, tc := range []struct {
		e          telemetry.Engine
		hits, miss string
	}{
		{telemetry.EngineLlamaCpp, "llamacpp:prompt_tokens_cached_total", "llamacpp:prompt_tokens_total"},
		{telemetry.EngineTRTLLM, "trtllm_kv_cache_reused_blocks_total", "trtllm_kv_cache_missed_blocks_total"},
	} {
		spec, _ := engines.Lookup(tc.e)
		f := newFamily(string(tc.e), tc.e, spec, spec.ModelLabels, "")
		g := newGenerator(nil, []string{"pod", "instance"}, nil)
		q := strings.Join(g.generate([]*family{f}).value[telemetry.PrefixCacheHit], " or ")
		by := g.by(f, true)
		rate := func(n string) string { return "sum by (" + by + ") (" + f.claimed(n, afreshRate(n)) + ")" }
		if want := "(" + rate(tc.hits) + " / (" + rate(tc.hits) + " + " + rate(tc.miss) + "))"; !strings.Contains(q, want) {
			t.Errorf("%s: prefix hit query lacks\n%s\nin\n%s", tc.e, want, q)
		}
		if strings.Contains(q, meanTag) {
			t.Errorf("%s: a diagnosis ratio tagged a mean (approximate): %s", tc.e, q)
		}
	}
	// A ratio standing in for a distribution is: Triton's mean queue time.
	spec, _ := engines.Lookup(telemetry.EngineTriton)
	f := newFamily("triton", telemetry.EngineTriton, spec, spec.ModelLabels, "")
	if q := strings.Join(newGenerator(nil, nil, nil).generate([]*family{f}).value[telemetry.QueueTime], " or "); !strings.Contains(q, `"`+meanTag+`", "counter_ratio"`) {
		t.Errorf("Triton's mean queue time not tagged a mean: %s", q)
	}
}

// Failure label values are matched as literals: LMDeploy's
// "ResponseType.CANCEL" has a dot, which unquoted would also match
// "ResponseTypeXCANCEL". PromQL's =~ is RE2 anchored at both ends, as
// Go's regexp with ^(?:…)$ is.
func TestFailureValuesMatchOnlyThemselves(t *testing.T) {
	spec, _ := engines.Lookup(telemetry.EngineLMDeploy)
	f := newFamily("lmdeploy", telemetry.EngineLMDeploy, spec, spec.ModelLabels, "")
	q := newGenerator(nil, nil, nil).errorExpr(f, "model_name")
	const matcher = `finished_reason=~`
	i := strings.Index(q, matcher)
	if i < 0 {
		t.Fatalf("no %s in %s", matcher, q)
	}
	lit, err := strconv.QuotedPrefix(q[i+len(matcher):])
	if err != nil {
		t.Fatalf("matcher is not one quoted string: %v in %s", err, q)
	}
	pattern, err := strconv.Unquote(lit)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("^(?:" + pattern + ")$")
	for _, v := range spec.Errors[0].FailedValues {
		if !re.MatchString(v) {
			t.Errorf("%q does not match failure value %q", pattern, v)
		}
		if look := strings.ReplaceAll(v, ".", "X"); look != v && re.MatchString(look) {
			t.Errorf("%q matches the look-alike %q of %q", pattern, look, v)
		}
	}
	for _, v := range []string{"ResponseType.FINISH", "ResponseType.SUCCESS", "ResponseType.CANCELLED"} {
		if re.MatchString(v) {
			t.Errorf("%q matches %q, not a failure value", pattern, v)
		}
	}
}

// afresh writes a query as the generator does, each rate(x[W]) started
// afresh at a counter reset (afreshRate).
func afresh(q string) string {
	return rateOverW.ReplaceAllStringFunc(q, func(m string) string {
		return afreshRate(rateOverW.FindStringSubmatch(m)[1])
	})
}

var rateOverW = regexp.MustCompile(`rate\(([^\[()]+)\[W\]\)`)

// TPOT is never derived from the ITL mean of an endpoint with speculative
// decoding: vLLM's ITL histogram then takes one observation per step of
// several tokens. The derived query leaves out every endpoint that has a
// spec-decode counter in the window, as it does those with their own TPOT
// histogram.
func TestDerivedTPOTNotUnderSpecDecoding(t *testing.T) {
	spec, _ := engines.Lookup(telemetry.EngineVLLM)
	f := newFamily("vllm", telemetry.EngineVLLM, spec, spec.ModelLabels, "")
	g := newGenerator(nil, []string{"pod", "instance"}, nil)
	q := strings.Join(g.generate([]*family{f}).value[telemetry.TPOT], " or ")
	by := g.by(f, true)
	for _, a := range []engines.Alias{spec.Signals[telemetry.SpecAccept][0], spec.Signals[telemetry.TPOT][0]} {
		if want := f.presenceOver(a, by); !strings.Contains(q, want) {
			t.Errorf("derived TPOT not ruled out by %s:\n%s\nnot in\n%s", a.Name, want, q)
		}
	}
	if !strings.Contains(q, "unless on("+by+")") {
		t.Errorf("no unless on the endpoint's labels: %s", q)
	}
}
