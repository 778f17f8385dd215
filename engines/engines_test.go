package engines

import (
	"sort"
	"strings"
	"testing"

	"github.com/ttftop/ttftop/internal/fixtures"
	"github.com/ttftop/ttftop/sources/scrape/expo"
	"github.com/ttftop/ttftop/telemetry"
)

func fixtureNames(t *testing.T, file string) []string {
	t.Helper()
	body := fixtures.Read(t, "metrics", file)
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	page, err := expo.Parse(body, expo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return page.Names
}

// Expected engines and alias choices, read from the fixture files.
func TestFixtures(t *testing.T) {
	for _, tc := range []struct {
		file       string
		engine     telemetry.Engine
		recognised []string
		chosen     map[telemetry.Signal]string // signal → alias name; "" = none
	}{
		{"vllm-v0.10-metrics.txt", telemetry.EngineVLLM,
			[]string{"vllm:time_per_output_token_seconds", "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "vllm:cache_config_info", "vllm:request_queue_time_seconds"},
			map[telemetry.Signal]string{
				telemetry.TTFT: "vllm:time_to_first_token_seconds", telemetry.ITL: "vllm:time_per_output_token_seconds",
				telemetry.TPOT: "", telemetry.KVCache: "vllm:kv_cache_usage_perc", Queue: "vllm:request_queue_time_seconds",
				telemetry.OutputTPS: "vllm:generation_tokens_total", telemetry.Running: "vllm:num_requests_running",
				telemetry.PrefixCacheHit: "vllm:prefix_cache_hits_total", telemetry.SpecAccept: "", // both names, new first
			}},
		{"vllm-v0.4-metrics.txt", telemetry.EngineVLLM,
			[]string{"vllm:gpu_cache_usage_perc", "vllm:time_per_output_token_seconds", "vllm:cache_config_info"},
			map[telemetry.Signal]string{
				telemetry.ITL: "vllm:time_per_output_token_seconds", telemetry.KVCache: "vllm:gpu_cache_usage_perc",
				Queue: "", telemetry.E2E: "vllm:e2e_request_latency_seconds",
			}},
		{"sglang-metrics.txt", telemetry.EngineSGLang,
			[]string{"sglang:time_per_output_token_seconds", "sglang:token_usage", "sglang:num_used_tokens"},
			map[telemetry.Signal]string{
				telemetry.ITL: "sglang:time_per_output_token_seconds", telemetry.KVCache: "sglang:token_usage",
				telemetry.Running: "sglang:num_running_reqs", telemetry.Waiting: "sglang:num_queue_reqs", Queue: "",
				telemetry.PrefixCacheHit: "sglang:cache_hit_rate", telemetry.PromptTPS: "sglang:prompt_tokens_total",
			}},
		{"tgi-metrics-excerpt.txt", telemetry.EngineTGI,
			[]string{"tgi_request_mean_time_per_token_duration", "tgi_request_duration", "tgi_request_failure", "tgi_request_count"},
			map[telemetry.Signal]string{
				telemetry.TPOT: "tgi_request_mean_time_per_token_duration", telemetry.TTFT: "", telemetry.Waiting: "tgi_queue_size",
				telemetry.OutputTPS:   "", // tgi_request_generated_tokens is not in the excerpt
				telemetry.RequestRate: "tgi_request_count", Queue: "tgi_request_queue_duration",
			}},
		{"triton-metrics-excerpt.txt", telemetry.EngineTriton,
			[]string{"nv_inference_request_duration_us", "nv_inference_request_success", "nv_inference_pending_request_count"},
			map[telemetry.Signal]string{
				telemetry.E2E: "nv_inference_request_duration_us", Queue: "nv_inference_queue_duration_us",
				telemetry.Waiting: "nv_inference_pending_request_count", telemetry.TTFT: "",
			}},
		{"vllm-v0.27-xpu-specdecode-mfu-metrics.txt", telemetry.EngineVLLM,
			[]string{"vllm:spec_decode_num_drafts_total", "vllm:estimated_read_bytes_per_gpu_total", "vllm:num_preemptions_total"},
			map[telemetry.Signal]string{
				telemetry.ITL: "vllm:inter_token_latency_seconds", telemetry.TPOT: "vllm:request_time_per_output_token_seconds",
				Queue: "vllm:request_queue_time_seconds", telemetry.PrefillTime: "vllm:request_prefill_time_seconds",
				telemetry.DecodeTime: "vllm:request_decode_time_seconds", telemetry.RequestRate: "vllm:request_success_total",
				telemetry.PromptTPS: "vllm:prompt_tokens_total", telemetry.Preemptions: "vllm:num_preemptions_total",
				telemetry.PrefixCacheHit: "vllm:prefix_cache_hits_total", telemetry.SpecAccept: "vllm:spec_decode_num_accepted_tokens_total",
				telemetry.SpecAcceptLen: "vllm:spec_decode_num_accepted_tokens_total", telemetry.EngineReadBytes: "vllm:estimated_read_bytes_per_gpu_total",
			}},
		{"nim-llama3.1-8b-metrics.txt", telemetry.EngineNIM,
			[]string{"num_requests_running", "gpu_cache_usage_perc", "time_per_output_token_seconds", "request_failure_total", "request_finish_total"},
			map[telemetry.Signal]string{
				telemetry.TTFT: "time_to_first_token_seconds", telemetry.ITL: "time_per_output_token_seconds", telemetry.TPOT: "",
				telemetry.E2E: "e2e_request_latency_seconds", telemetry.Running: "num_requests_running", telemetry.Waiting: "num_requests_waiting",
				telemetry.KVCache: "gpu_cache_usage_perc", telemetry.OutputTPS: "generation_tokens_total",
				telemetry.PromptTPS: "prompt_tokens_total", telemetry.RequestRate: "request_finish_total", Queue: "",
			}},
		{"ik-llamacpp-server-metrics.txt", telemetry.EngineLlamaCpp,
			[]string{"llamacpp:tokens_predicted_seconds_total", "llamacpp:kv_cache_usage_ratio", "llamacpp:requests_deferred"},
			map[telemetry.Signal]string{
				telemetry.ITL: "llamacpp:tokens_predicted_seconds_total", telemetry.Running: "llamacpp:requests_processing",
				telemetry.Waiting: "llamacpp:requests_deferred", telemetry.KVCache: "llamacpp:kv_cache_usage_ratio",
				telemetry.OutputTPS: "llamacpp:tokens_predicted_total", telemetry.PromptTPS: "llamacpp:prompt_tokens_total",
				telemetry.SpecAccept: "", telemetry.TTFT: "",
			}},
		{"dcgm-exporter-metrics.txt", telemetry.EngineUnknown, nil, nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			names := fixtureNames(t, tc.file)
			d := Detect(names)
			if d.Engine != tc.engine {
				t.Fatalf("engine %q, want %q", d.Engine, tc.engine)
			}
			for _, n := range tc.recognised {
				if i := sort.SearchStrings(d.Recognised, n); i >= len(d.Recognised) || d.Recognised[i] != n {
					t.Errorf("recognised lacks %s: %v", n, d.Recognised)
				}
			}
			if tc.engine == telemetry.EngineUnknown {
				if d.Exporter != "dcgm-exporter" || len(d.Recognised) != 0 {
					t.Fatalf("detection %+v", d)
				}
				return
			}
			present := map[string]bool{}
			for _, n := range names {
				present[n] = true
			}
			spec, _ := Lookup(d.Engine)
			for sig, want := range tc.chosen {
				a, ok := spec.Resolve(sig, func(n string) bool { return present[n] })
				if (want == "") == ok || a.Name != want {
					t.Errorf("%s: got %q (%v), want %q", sig, a.Name, ok, want)
				}
			}
		})
	}
}

func TestDetectOtherEngines(t *testing.T) {
	for want, names := range map[telemetry.Engine][]string{
		telemetry.EngineNIM: {"num_requests_running", "num_requests_waiting", "gpu_cache_usage_perc", "time_to_first_token_seconds",
			"time_per_output_token_seconds", "e2e_request_latency_seconds", "request_success_total", "request_failure_total", "generation_tokens_total"},
		telemetry.EngineTRTLLM: {"time_to_first_token_seconds", "time_per_output_token_seconds", "e2e_request_latency_seconds",
			"request_queue_time_seconds", "request_success_total"},
		telemetry.EngineLMDeploy: {"lmdeploy:iter_token_latency", "lmdeploy:num_requests_running", "lmdeploy:gpu_cache_usage_perc"},
		telemetry.EngineLlamaCpp: {"llamacpp:tokens_predicted_total", "llamacpp:tokens_predicted_seconds_total", "llamacpp:requests_processing"},
		telemetry.EngineTriton:   {"nv_trt_llm_request_metrics", "nv_trt_llm_kv_cache_block_metrics", "nv_gpu_utilization"},
		telemetry.EngineDynamo: {"dynamo_frontend_time_to_first_token_seconds", "dynamo_frontend_inflight_requests",
			"dynamo_frontend_requests_total", "dynamo_component_requests_total"},
		telemetry.EngineUnknown: {"python_gc_objects_collected_total", "my_app_requests_total"},
	} {
		if d := Detect(names); d.Engine != want {
			t.Errorf("%v: got %q, want %q", names, d.Engine, want)
		}
	}
	// Dynamo re-exports TRT-LLM with the trtllm_ prefix.
	spec, _ := Lookup(telemetry.EngineTRTLLM)
	d := Detect([]string{"trtllm_time_to_first_token_seconds", "trtllm_kv_cache_utilization"})
	a, ok := spec.Resolve(telemetry.TTFT, func(n string) bool { return n == "trtllm_time_to_first_token_seconds" })
	if d.Engine != telemetry.EngineTRTLLM || !ok || a.Name != "trtllm_time_to_first_token_seconds" {
		t.Fatalf("dynamo: %+v %+v", d, a)
	}
}

// The engines' renames by version, newest name first (docs/engines.md).
func TestRenames(t *testing.T) {
	names := func(e telemetry.Engine, sig telemetry.Signal) string {
		s, _ := Lookup(e)
		var out []string
		for _, a := range s.Signals[sig] {
			out = append(out, a.Name)
		}
		return strings.Join(out, " → ")
	}
	for _, tc := range []struct {
		e    telemetry.Engine
		sig  telemetry.Signal
		want string
	}{
		{telemetry.EngineVLLM, telemetry.ITL, "vllm:inter_token_latency_seconds → vllm:time_per_output_token_seconds"},
		{telemetry.EngineVLLM, telemetry.TPOT, "vllm:request_time_per_output_token_seconds"},
		{telemetry.EngineVLLM, telemetry.KVCache, "vllm:kv_cache_usage_perc → vllm:gpu_cache_usage_perc"},
		{telemetry.EngineSGLang, telemetry.ITL, "sglang:inter_token_latency_seconds → sglang:time_per_output_token_seconds"},
		{telemetry.EngineLMDeploy, telemetry.ITL, "lmdeploy:iter_token_latency → lmdeploy:time_per_output_token_seconds"},
		{telemetry.EngineTRTLLM, telemetry.TTFT, "trtllm_time_to_first_token_seconds → time_to_first_token_seconds"},
		{telemetry.EngineTRTLLM, telemetry.TPOT, "trtllm_time_per_output_token_seconds → time_per_output_token_seconds"},
		{telemetry.EngineTRTLLM, telemetry.ITL, ""}, // its time_per_output_token is per request
		{telemetry.EngineLMDeploy, telemetry.SpecAccept, "lmdeploy:spec_decode_num_accepted_tokens_total"},
		{telemetry.EngineLlamaCpp, telemetry.SpecAcceptLen, "llamacpp:spec_decode_num_accepted_tokens_total"},
		{telemetry.EngineLlamaCpp, telemetry.PrefixCacheHit, "llamacpp:prompt_tokens_cached_total"},
		{telemetry.EngineTRTLLM, telemetry.PrefixCacheHit,
			"trtllm_prompt_cached_tokens_total → trtllm_kv_cache_reused_blocks_total → trtllm_kv_cache_hit_rate"},
		{telemetry.EngineNIM, telemetry.KVCache, "gpu_cache_usage_perc"},
		{telemetry.EngineTriton, telemetry.Waiting, "nv_trt_llm_request_metrics → nv_inference_pending_request_count"},
		{telemetry.EngineLlamaCpp, telemetry.ITL, "llamacpp:tokens_predicted_seconds_total"},
	} {
		if got := names(tc.e, tc.sig); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.e, tc.sig, got, tc.want)
		}
	}
	tr, _ := Lookup(telemetry.EngineTriton)
	if a := tr.Signals[telemetry.E2E][0]; a.Type != CounterRatio || a.Per != "nv_inference_request_success" || a.Factor() != 1e-6 {
		t.Errorf("triton e2e %+v", a)
	}
	if a := tr.Signals[telemetry.TTFT][0]; a.Factor() != 1e-3 {
		t.Errorf("triton ttft %+v", a)
	}
	// The hit rates over a sum: hits and the other outcome, never hits / misses.
	for _, tc := range []struct {
		e         telemetry.Engine
		hits, per string
	}{
		{telemetry.EngineLlamaCpp, "llamacpp:prompt_tokens_cached_total", "llamacpp:prompt_tokens_total"},
		{telemetry.EngineTRTLLM, "trtllm_kv_cache_reused_blocks_total", "trtllm_kv_cache_missed_blocks_total"},
	} {
		s, _ := Lookup(tc.e)
		var got *Alias
		for _, a := range s.Signals[telemetry.PrefixCacheHit] {
			if a.Type == CounterShare {
				got = &a
			}
		}
		if got == nil || got.Name != tc.hits || got.Per != tc.per || got.Factor() != 1 || got.Offset != 0 {
			t.Errorf("%s prefix hit share %+v", tc.e, got)
		}
	}
}

func TestTableIsConsistent(t *testing.T) {
	known := map[telemetry.Signal]bool{Queue: true}
	for _, s := range telemetry.Signals {
		known[s] = true
	}
	seen := map[telemetry.Engine]bool{}
	for _, s := range All() {
		if seen[s.Engine] || s.Title == "" || len(s.Paths) == 0 {
			t.Errorf("spec %+v", s.Engine)
		}
		seen[s.Engine] = true
		if len(s.ModelLabels) == 0 && s.ModelInfo.Path == "" && s.Engine != telemetry.EngineLlamaCpp {
			t.Errorf("%s: no way to name the model", s.Engine)
		}
		for sig, aliases := range s.Signals {
			if !known[sig] || len(aliases) == 0 {
				t.Errorf("%s: signal %q", s.Engine, sig)
			}
			for _, a := range aliases {
				if a.Name == "" || a.Type == 0 || a.TwoCounters() != (a.Per != "") || a.Scale < 0 {
					t.Errorf("%s %s: alias %+v", s.Engine, sig, a)
				}
			}
		}
		if s.ModelLabel() == "" && len(s.ModelLabels) > 0 {
			t.Errorf("%s: model label", s.Engine)
		}
	}
	if len(Names()) < 60 {
		t.Errorf("Names() has %d names", len(Names()))
	}
	if CreatedName("vllm:generation_tokens_total", true) != "vllm:generation_tokens_created" ||
		CreatedName("vllm:iteration_tokens_total", false) != "vllm:iteration_tokens_total_created" {
		t.Error("CreatedName")
	}
	a := Alias{Name: "x", Match: map[string]string{"request_type": "active"}}
	if a.Bucket() != "x_bucket" || a.Sum() != "x_sum" || a.Count() != "x_count" || a.Factor() != 1 {
		t.Error("alias helpers")
	}
	labels := map[string]string{"request_type": "active", "model": "m"}
	if !a.Matches(func(n string) string { return labels[n] }) || a.Matches(func(string) string { return "waiting" }) {
		t.Error("Matches")
	}
	for typ, want := range map[Type]string{Gauge: "gauge", Counter: "counter", Histogram: "histogram", HistogramSum: "histogram_sum", CounterRatio: "counter_ratio", CounterShare: "counter_share", 0: "unknown"} {
		if typ.String() != want {
			t.Errorf("%d: %s", typ, typ)
		}
	}
}

// An adapter list is of distinct names: blanks and repeats dropped.
func TestLoRAAdapterNames(t *testing.T) {
	if got := (LoRAInfo{}).Adapters(" a, b,,a "); strings.Join(got, "|") != "a|b" {
		t.Errorf("Adapters: %q, want a|b", got)
	}
}

// A page-wide gauge is given to the models a page serves: its engine must
// count requests per model (PromQL joins it onto them).
func TestPageWideAliasesHaveModels(t *testing.T) {
	for _, s := range All() {
		for sig, aliases := range s.Signals {
			for _, a := range aliases {
				if a.PageWide && (len(s.Signals[telemetry.RequestRate]) == 0 || len(s.ModelLabels) == 0 || a.Type != Gauge) {
					t.Errorf("%s %s: page-wide %s on an engine without per-model request counters, or not a gauge", s.Engine, sig, a.Name)
				}
			}
		}
	}
}

// A spec's names are listed once each, though several signals read one
// family (vLLM's request_success_total: request rate and errors).
func TestSpecNamesOnce(t *testing.T) {
	for _, s := range All() {
		seen := map[string]bool{}
		for _, n := range s.Names() {
			if seen[n] {
				t.Errorf("%s: %s listed twice", s.Engine, n)
			}
			seen[n] = true
		}
	}
}
