package sweep

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

// kneeReport is a sweep whose knee's requests had these TPOTs (ms).
func kneeReport(engine telemetry.Engine, tpotMS ...float64) *Report {
	var secs []float64
	for _, v := range tpotMS {
		secs = append(secs, v/1000)
	}
	p95 := telemetry.SampleQuantile(0.95, secs) * 1000
	return &Report{Model: "keda", Engine: engine, Endpoint: "h/keda",
		Knee: &Knee{Concurrency: 32, TPOTp95ms: &p95, tpot: secs}}
}

// spread is n TPOTs evenly from lo to hi ms.
func spread(n int, lo, hi float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	return out
}

const vllmTPOT = "vllm:request_time_per_output_token_seconds"

// The knee: TPOT p95 8.6 ms, all under vLLM's first bound, 10 ms.
// histogram_quantile reads 9.5 ms at any such load, above a threshold at
// 8.6; the trigger reads the share over 10 ms instead, against 5 %, and
// says the buckets cannot resolve the knee.
func TestTriggerInsideFirstBucket(t *testing.T) {
	tr, err := TriggerOf(kneeReport(telemetry.EngineVLLM, spread(40, 7.9, 8.7)...), "2m")
	if err != nil {
		t.Fatal(err)
	}
	want := `1 - sum(rate(` + vllmTPOT + `_bucket{model_name="keda",le=~"0\\.010*"}[2m])) / sum(rate(` + vllmTPOT + `_count{model_name="keda"}[2m]))`
	if tr.Query != want || tr.Threshold != 0.05 || tr.BoundMS != 10 {
		t.Errorf("query %s threshold %v, want %s against 0.05", tr.Query, tr.Threshold, want)
	}
	if !strings.Contains(tr.Warning, "cannot resolve the knee") || !strings.Contains(tr.Warning, "(0 ms, 10 ms]") ||
		!strings.Contains(tr.Reads, "exceeded 10 ms") || !strings.Contains(tr.Reads, "above 5 % the TPOT p95 has passed it (the knee's requests: 0.0 % over it") ||
		!strings.Contains(tr.Series, `le="0.01"`) {
		t.Errorf("trigger %+v", tr)
	}
}

// A knee whose requests straddle a bound: the share over it at the knee
// is the threshold, and the bound resolves the knee.
func TestTriggerSplitsTheKneesRequests(t *testing.T) {
	tr, err := TriggerOf(kneeReport(telemetry.EngineVLLM, spread(20, 15, 34)...), "1m")
	if err != nil {
		t.Fatal(err)
	}
	// 15..34 ms by 1 ms: 26..34 exceed 25 ms, 9 of 20.
	if !strings.Contains(tr.Query, `le=~"0\\.0250*"`) || math.Abs(tr.Threshold-0.45) > 1e-9 || tr.Warning != "" ||
		!strings.Contains(tr.Reads, "the knee's requests exceeded it 45.0 % of the time") {
		t.Errorf("trigger %+v, want the share over 25 ms against 0.45, no warning", tr)
	}
}

// A narrow knee just under a bound: the bound resolves it (within 10 %),
// no warning; beyond the last bound there is nothing to trigger on.
func TestTriggerBoundAboveTheKnee(t *testing.T) {
	tr, err := TriggerOf(kneeReport(telemetry.EngineUnknown, spread(20, 22.5, 23.5)...), "1m")
	if err != nil || !strings.Contains(tr.Query, vllmTPOT+`_bucket{model_name="keda",le=~"0\\.0250*"}`) || tr.Threshold != 0.05 || tr.Warning != "" {
		t.Errorf("trigger %+v (%v), want vLLM's share over 25 ms against 0.05", tr, err)
	}
	if tr, err := TriggerOf(kneeReport(telemetry.EngineVLLM, 90_000, 95_000), "1m"); err == nil {
		t.Errorf("a knee beyond the last bound: %+v", tr)
	}
}

// Where ttftop does not know the buckets (TGI), the trigger interpolates
// and warns that it may not resolve the threshold.
func TestTriggerUnknownBuckets(t *testing.T) {
	tr, err := TriggerOf(kneeReport(telemetry.EngineTGI, spread(20, 20, 24)...), "5m")
	if err != nil || !strings.Contains(tr.Query, "histogram_quantile(0.95") || !strings.Contains(tr.Query, "tgi_request_mean_time_per_token_duration_bucket[5m]") ||
		!strings.Contains(tr.Warning, "does not know the bucket bounds") || math.Abs(tr.Threshold-0.0238) > 1e-4 {
		t.Errorf("trigger %+v (%v)", tr, err)
	}
}

// The snippet carries the trigger, says what it reads, and warns.
func TestSnippet(t *testing.T) {
	rep := kneeReport(telemetry.EngineVLLM, spread(40, 7.9, 8.7)...)
	rep.Model = "org/Model-7B"
	tr, err := TriggerOf(rep, "2m")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Snippet(KEDA{Target: "llm", Window: "2m", MinReplicas: 1, MaxReplicas: 4}, rep, tr)
	if err != nil || !strings.Contains(s, `threshold: "0.05"`) || !strings.Contains(s, "name: tpot-org-model-7b") ||
		!strings.Contains(s, "# Reads the share of requests") || !strings.Contains(s, "# WARNING: the engine's TPOT buckets cannot resolve") ||
		!strings.Contains(s, `model_name="org/Model-7B"`) {
		t.Errorf("%v\n%s", err, s)
	}
}

// The le matcher takes a bound however it is written, and no other bound.
func TestLeRegexp(t *testing.T) {
	for b, cases := range map[float64]map[string]bool{
		10:    {"10": true, "10.0": true, "100": false, "1.0": false},
		0.025: {"0.025": true, "0.0250": true, "0.0251": false, "0.25": false},
	} {
		re := regexp.MustCompile("^(?:" + leRegexp(b) + ")$") // PromQL anchors =~
		for le, want := range cases {
			if got := re.MatchString(le); got != want {
				t.Errorf("bound %v, le=%q: match %v, want %v", b, le, got, want)
			}
		}
	}
}

// With the found Deployment's pod matchers, every series the trigger
// reads (buckets and count) is narrowed to its pods by the labels
// prometheus-operator gives them; the pod pattern, as Prometheus anchors
// it, takes the Deployment's pods and not another Deployment's whose
// name starts the same.
func TestTriggerNarrowedToTheDeploymentsPods(t *testing.T) {
	m := PodMatchers("llm", "qwen")
	rep := kneeReport(telemetry.EngineVLLM, spread(40, 7.9, 8.7)...)
	tr, err := TriggerOf(rep, "2m", m...)
	if err != nil {
		t.Fatal(err)
	}
	snippet, err := Snippet(KEDA{Target: "qwen", Namespace: "llm", Window: "2m", MaxReplicas: 4, Matchers: m, Assumes: "prometheus-operator's target labels"}, rep, tr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(snippet, `# Its series are selected by namespace="llm", pod=~"qwen-[a-z0-9]+-[a-z0-9]{5}": prometheus-operator's target labels.`) {
		t.Errorf("snippet does not say which labels it assumes:\n%s", snippet)
	}
	sel := `model_name="keda",namespace="llm",pod=~"qwen-[a-z0-9]+-[a-z0-9]{5}"`
	want := `1 - sum(rate(` + vllmTPOT + `_bucket{` + sel + `,le=~"0\\.010*"}[2m])) / sum(rate(` + vllmTPOT + `_count{` + sel + `}[2m]))`
	if tr.Query != want {
		t.Errorf("query %s\nwant  %s", tr.Query, want)
	}
	pattern, err := strconv.Unquote(strings.TrimPrefix(m[1], "pod=~"))
	if err != nil {
		t.Fatal(err)
	}
	anchored := regexp.MustCompile("^(?:" + pattern + ")$") // as Prometheus matches =~
	for pod, want := range map[string]bool{"qwen-7c9b2d5f8-x2k9p": true, "qwen-5d4f8-ab12c": true,
		"qwen-other-7c9b2d5f8-x2k9p": false, "qwen2-7c9b2d5f8-x2k9p": false, "qwen-0": false} {
		if got := anchored.MatchString(pod); got != want {
			t.Errorf("pod %s matched %v, want %v", pod, got, want)
		}
	}
}
