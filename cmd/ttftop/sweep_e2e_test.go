//go:build integration

package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ttftop/ttftop/internal/schematest"
	"github.com/ttftop/ttftop/internal/sim"
)

// bendingModel is a simulated model whose decode step lasts step plus
// perSeq per sequence in the batch (a pure bandwidth model of that step
// time, at most maxBatch sequences), so TPOT grows with concurrency.
func bendingModel(name string, step, perSeq time.Duration, maxBatch int) sim.ModelSpec {
	const peak, eff = 3.35e12, 0.5
	return sim.ModelSpec{Name: name, Params: step.Seconds() * peak * eff / 2, DtypeBytes: 2, KVBytesPerToken: 1024,
		GPU: "H100 SXM", Efficiency: eff, PrefillTokensPerSec: 1e6, MaxBatch: maxBatch, MaxQueue: maxBatch,
		SeqOverhead: perSeq}
}

// sweepModel bends fast: 10 ms per step plus 2.5 ms per sequence, TPOT
// 12.5, 15, 20 and 30 ms at 1, 2, 4 and 8 streams.
func sweepModel() sim.ModelSpec {
	return bendingModel("fast", 10*time.Millisecond, 2500*time.Microsecond, 64)
}

// kedaScaledObject is the part of KEDA's ScaledObject CRD the snippet
// uses, decoded strictly: an unknown or misspelt field fails, and trigger
// metadata must be a map of strings, as the CRD declares it.
type kedaScaledObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Spec struct {
		ScaleTargetRef struct {
			Name string `yaml:"name"`
		} `yaml:"scaleTargetRef"`
		MinReplicaCount *int `yaml:"minReplicaCount"`
		MaxReplicaCount *int `yaml:"maxReplicaCount"`
		Fallback        *struct {
			FailureThreshold int `yaml:"failureThreshold"`
			Replicas         int `yaml:"replicas"`
		} `yaml:"fallback"`
		Triggers []struct {
			Type       string            `yaml:"type"`
			MetricType string            `yaml:"metricType"`
			Metadata   map[string]string `yaml:"metadata"`
		} `yaml:"triggers"`
	} `yaml:"spec"`
}

func parseScaledObject(t *testing.T, doc string) kedaScaledObject {
	t.Helper()
	var so kedaScaledObject
	dec := yaml.NewDecoder(strings.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&so); err != nil {
		t.Fatalf("KEDA snippet is not a ScaledObject: %v\n%s", err, doc)
	}
	return so
}

// The real binary sweeps the simulator: TPOT rises with concurrency, the
// knee is the last step under the TPOT objective, progress goes to stderr
// as it runs, and the KEDA snippet is a valid ScaledObject with the
// trigger the report names.
func TestSweepEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and sweeps for several seconds")
	}
	bin := buildTtftop(t)
	url := startSim(t, sweepModel())
	run := func(extra ...string) (string, string, error) {
		return runSweepBin(bin, url, append([]string{"--max-concurrency", "8", "--max-tokens", "24", "--min-requests", "10",
			"--tolerance", "0.2", "--max-step-time", "10s", "--max-rpm", "60000", "--slo-tpot", "25ms", "--slo-ttft", "1s"}, extra...)...)
	}

	out, errs, err := run("--json")
	if err != nil {
		t.Fatalf("sweep: %v\nstdout:\n%s\nstderr:\n%s", err, out, errs)
	}
	var rep struct {
		Steps []struct {
			Concurrency     int      `json:"concurrency"`
			Requests        int      `json:"requests"`
			TTFTp95ms       *float64 `json:"ttft_p95_ms"`
			TPOTp95ms       *float64 `json:"tpot_p95_ms"`
			OutputTPS       *float64 `json:"output_tokens_per_s"`
			Goodput         *float64 `json:"goodput_ratio"`
			MeetsObjectives bool     `json:"meets_objectives"`
		} `json:"steps"`
		Knee *struct {
			Concurrency int      `json:"concurrency"`
			TPOTp95ms   *float64 `json:"tpot_p95_ms"`
		} `json:"knee"`
		Stop    string `json:"stop"`
		KEDA    string `json:"keda"`
		Trigger struct {
			Query     string  `json:"query"`
			Threshold float64 `json:"threshold_ratio"`
		} `json:"keda_trigger"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	schematest.Validate(t, "sweep", []byte(out))
	if len(rep.Steps) != 4 {
		t.Fatalf("steps %+v, want 1, 2, 4, 8 (stop: %s)", rep.Steps, rep.Stop)
	}
	for i, s := range rep.Steps {
		if s.Concurrency != 1<<i || s.Requests < 10 || s.TTFTp95ms == nil || s.TPOTp95ms == nil || s.OutputTPS == nil || s.Goodput == nil {
			t.Fatalf("step %d: %+v", i, s)
		}
		t.Logf("c=%d TPOT p95 %.2f ms, %.0f tok/s, goodput %.2f, meets %v", s.Concurrency, *s.TPOTp95ms, *s.OutputTPS, *s.Goodput, s.MeetsObjectives)
	}
	first, last := rep.Steps[0], rep.Steps[3]
	if *last.TPOTp95ms < 1.25**first.TPOTp95ms {
		t.Errorf("TPOT p95 %.2f ms at 8 vs %.2f at 1: did not rise", *last.TPOTp95ms, *first.TPOTp95ms)
	}
	if *rep.Steps[2].OutputTPS < 2**first.OutputTPS {
		t.Errorf("output tok/s %.0f at 4 vs %.0f at 1: batching did not pay", *rep.Steps[2].OutputTPS, *first.OutputTPS)
	}
	// The knee is the last step of the run of steps that meet the
	// objectives. The simulator's step is 10 ms plus 2.5 ms per sequence:
	// TPOT 12.5 ms at 1, 15 at 2, 20 at 4 and 30 at 8, against 25 ms. On
	// an idle machine the knee is 4; the client shares the CPU with the
	// simulator, and load only adds to TPOT, so 2 is allowed (10 ms of
	// margin), as long as the knee is the one the steps say.
	want := 0
	for _, s := range rep.Steps {
		if !s.MeetsObjectives {
			break
		}
		want = s.Concurrency
	}
	if rep.Knee == nil || rep.Knee.Concurrency != want || want < 2 || rep.Steps[3].MeetsObjectives {
		t.Fatalf("knee %+v, want the last step meeting the objectives (%d; at least 2, never 8) (steps %+v)", rep.Knee, want, rep.Steps)
	}
	if !strings.Contains(errs, "ttftop sweep: concurrency 1: ") || !strings.Contains(errs, "ttftop sweep: concurrency 8: ") {
		t.Errorf("no progress on stderr:\n%s", errs)
	}

	so := parseScaledObject(t, rep.KEDA)
	if so.APIVersion != "keda.sh/v1alpha1" || so.Kind != "ScaledObject" || so.Metadata.Name != "tpot-fast" ||
		so.Spec.ScaleTargetRef.Name == "" || len(so.Spec.Triggers) != 1 {
		t.Fatalf("ScaledObject %+v", so)
	}
	tr := so.Spec.Triggers[0]
	threshold, err := strconv.ParseFloat(tr.Metadata["threshold"], 64)
	// The trigger reads the share of requests over a bucket bound of the
	// engine's TPOT histogram (TestSweepKEDATriggerDecides evaluates it).
	if tr.Type != "prometheus" || tr.MetricType != "Value" || err != nil ||
		!strings.HasPrefix(tr.Metadata["query"], `1 - sum(rate(vllm:request_time_per_output_token_seconds_bucket{model_name="fast",le=~`) ||
		!strings.HasSuffix(tr.Metadata["query"], `[2m])) / sum(rate(vllm:request_time_per_output_token_seconds_count{model_name="fast"}[2m]))`) ||
		tr.Metadata["query"] != rep.Trigger.Query || threshold != rep.Trigger.Threshold ||
		tr.Metadata["ignoreNullValues"] != "false" || so.Spec.Fallback == nil || so.Spec.Fallback.Replicas < 1 ||
		tr.Metadata["serverAddress"] == "" || !(threshold >= 0.05 && threshold <= 0.5) {
		t.Errorf("trigger %+v (threshold %v), report's %+v", tr, threshold, rep.Trigger)
	}

	// The text report ends in the same snippet.
	out, _, err = run("--min-requests", "5", "--max-concurrency", "2", "--slo-tpot", "0", "--slo-e2e", "5s")
	if err != nil {
		t.Fatalf("text sweep: %v\n%s", err, out)
	}
	i := strings.Index(out, "# KEDA ScaledObject")
	if !strings.Contains(out, "knee: concurrency 2 ") || i < 0 {
		t.Fatalf("text report:\n%s", out)
	}
	parseScaledObject(t, out[i:])
}
