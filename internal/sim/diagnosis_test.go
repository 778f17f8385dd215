package sim

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// generateAll runs a request to its end and returns the tokens received.
func generateAll(t *testing.T, s *Server, req Request) int {
	t.Helper()
	st, err := s.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		toks, fin, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		n += len(toks)
		if fin != "" {
			return n
		}
	}
}

// With prefix caching, a repeated prompt finds all its full blocks but
// the last token's in the cache: queries count every prompt token, hits
// the cached ones, and the repeat's prefill is shorter.
func TestPrefixCacheHitsRepeatedPrompts(t *testing.T) {
	s, ts := newTestServer(t, Config{PrefixCaching: true,
		Models: []ModelSpec{stepModel("m", 2*time.Millisecond, 20000)}})
	const prompt = 1000 // 50 ms of prefill at 20k tok/s
	req := Request{PromptTokens: prompt, MaxTokens: 4, IgnoreEOS: true, PrefixKey: 7, PrefixTokens: prompt}
	lbl := map[string]string{"model_name": "m"}
	generateAll(t, s, req)
	generateAll(t, s, req)
	other := req
	other.PrefixKey = 8 // a different prompt: no hit
	generateAll(t, s, other)
	fams := scrape(t, ts.URL)
	queries := metricValue(t, fams, "vllm:prefix_cache_queries_total", lbl).GetCounter().GetValue()
	hits := metricValue(t, fams, "vllm:prefix_cache_hits_total", lbl).GetCounter().GetValue()
	if wantHits := float64((prompt - 1) / blockSize * blockSize); queries != 3*prompt || hits != wantHits {
		t.Errorf("prefix cache: %v hits of %v queries, want %v of %v", hits, queries, wantHits, 3*prompt)
	}
	prefill := metricValue(t, fams, "vllm:request_prefill_time_seconds", lbl).GetHistogram()
	if prefill.GetSampleCount() != 3 {
		t.Fatalf("prefill histogram %v", prefill)
	}
	// Two full prefills (50 ms each) and one of 8 tokens: the sum stays
	// well under three full ones.
	if sum := prefill.GetSampleSum(); sum > 2.5*0.05 {
		t.Errorf("prefill time sum %.3f s: the cached prompt was prefilled again", sum)
	}

	// Without prefix caching the counters stay 0, as vLLM's do.
	s2, ts2 := newTestServer(t, Config{Models: []ModelSpec{stepModel("m", 2*time.Millisecond, 20000)}})
	generateAll(t, s2, req)
	generateAll(t, s2, req)
	fams = scrape(t, ts2.URL)
	if q := metricValue(t, fams, "vllm:prefix_cache_queries_total", lbl).GetCounter().GetValue(); q != 0 {
		t.Errorf("queries %v with prefix caching off", q)
	}
}

// Speculative decoding: every decode step emits the target's token plus
// the accepted draft tokens, so generated tokens = requests (their first
// token) + drafts + accepted; draft tokens = k × drafts; per-position
// counts sum to the accepted ones and never grow with the position.
func TestSpeculativeDecodingCounters(t *testing.T) {
	spec := stepModel("m", 2*time.Millisecond, 1e6)
	spec.SpecTokens, spec.SpecAcceptRate = 3, 0.7
	s, ts := newTestServer(t, Config{Models: []ModelSpec{spec}})
	const requests, maxTokens = 4, 200
	got := 0
	for range requests {
		got += generateAll(t, s, Request{PromptTokens: 50, MaxTokens: maxTokens, IgnoreEOS: true})
	}
	if got != requests*maxTokens {
		t.Fatalf("%d tokens received, want %d", got, requests*maxTokens)
	}
	fams := scrape(t, ts.URL)
	lbl := map[string]string{"model_name": "m"}
	counter := func(name string) float64 { return metricValue(t, fams, name, lbl).GetCounter().GetValue() }
	gen := counter("vllm:generation_tokens_total")
	drafts := counter("vllm:spec_decode_num_drafts_total")
	draftTokens := counter("vllm:spec_decode_num_draft_tokens_total")
	accepted := counter("vllm:spec_decode_num_accepted_tokens_total")
	if gen != requests*maxTokens || gen != requests+drafts+accepted || draftTokens != 3*drafts {
		t.Errorf("generated %v, drafts %v, draft tokens %v, accepted %v", gen, drafts, draftTokens, accepted)
	}
	// 0.7 + 0.7² + 0.7³ ≈ 1.53 accepted per draft, fewer at each request's end.
	if per := accepted / drafts; per < 1.2 || per > 1.8 {
		t.Errorf("accepted per draft %.2f", per)
	}
	var sum, prev float64 = 0, drafts
	for pos := range 3 {
		v := metricValue(t, fams, "vllm:spec_decode_num_accepted_tokens_per_pos_total",
			map[string]string{"model_name": "m", "position": strconv.Itoa(pos)}).GetCounter().GetValue()
		if v > prev {
			t.Errorf("position %d accepted %v > position before %v", pos, v, prev)
		}
		sum, prev = sum+v, v
	}
	if sum != accepted {
		t.Errorf("per-position sum %v, accepted %v", sum, accepted)
	}
	// ITL is per step (event): fewer observations than decode tokens.
	itl := metricValue(t, fams, "vllm:inter_token_latency_seconds", lbl).GetHistogram().GetSampleCount()
	if float64(itl) != drafts {
		t.Errorf("ITL observations %d, want one per decode step (%v)", itl, drafts)
	}
	if _, ok := fams["vllm:estimated_read_bytes_per_gpu_total"]; ok {
		t.Error("MFU counters without MFUMetrics")
	}
}

// The MFU counters: per GPU, every step reads the weights (and the KV it
// holds), so read bytes ≥ steps × weight bytes / GPUs; they are absent
// for models without MFUMetrics, and spec-decode families likewise.
func TestMFUCounters(t *testing.T) {
	spec := stepModel("m", 2*time.Millisecond, 1e6)
	spec.MFUMetrics, spec.NumGPUs = true, 2
	s, ts := newTestServer(t, Config{Models: []ModelSpec{spec}})
	generateAll(t, s, Request{PromptTokens: 50, MaxTokens: 40, IgnoreEOS: true})
	fams := scrape(t, ts.URL)
	lbl := map[string]string{"model_name": "m"}
	read := metricValue(t, fams, "vllm:estimated_read_bytes_per_gpu_total", lbl).GetCounter().GetValue()
	write := metricValue(t, fams, "vllm:estimated_write_bytes_per_gpu_total", lbl).GetCounter().GetValue()
	flops := metricValue(t, fams, "vllm:estimated_flops_per_gpu_total", lbl).GetCounter().GetValue()
	steps := float64(s.engines[0].steps.Load())
	weights := spec.Params * spec.DtypeBytes / 2
	if steps < 40 || read < steps*weights || read > steps*weights*1.01 {
		t.Errorf("read bytes %v over %v steps, want ≈ %v per step", read, steps, weights)
	}
	// 50 prompt tokens, then 39 decode steps (the first token comes with
	// the prefill), KV 1024 B/token, over 2 GPUs.
	if tokens := 50.0 + 39; write != tokens*spec.KVBytesPerToken/2 || flops != 2*spec.Params*tokens/2 {
		t.Errorf("write bytes %v, flops %v", write, flops)
	}
	if _, ok := fams["vllm:spec_decode_num_drafts_total"]; ok {
		t.Error("spec-decode counters without SpecTokens")
	}
}

// SGLang mode serves the same engine's figures under SGLang's names:
// cached tokens and requests as counters, the hit rate and speculative
// decoding as gauges (since start).
func TestSGLangDiagnosisFamilies(t *testing.T) {
	spec := stepModel("m", 2*time.Millisecond, 1e6)
	spec.SpecTokens = 2
	s, ts := newTestServer(t, Config{MetricsFormat: FormatSGLang, PrefixCaching: true, Models: []ModelSpec{spec}})
	req := Request{PromptTokens: 200, MaxTokens: 50, IgnoreEOS: true, PrefixKey: 1, PrefixTokens: 200}
	generateAll(t, s, req)
	generateAll(t, s, req)
	fams := scrape(t, ts.URL)
	lbl := map[string]string{"model_name": "m"}
	m := s.engines[0].metrics
	m.mu.Lock()
	ec := m.engineCounters.clone()
	m.mu.Unlock()
	if got := metricValue(t, fams, "sglang:cached_tokens_total", lbl).GetCounter().GetValue(); got != 192 || got != ec.prefixHits {
		t.Errorf("cached tokens %v, want 192 (the full blocks of 199)", got)
	}
	if got := metricValue(t, fams, "sglang:num_requests_total", lbl).GetCounter().GetValue(); got != 2 {
		t.Errorf("requests %v", got)
	}
	if got := metricValue(t, fams, "sglang:cache_hit_rate", lbl).GetGauge().GetValue(); got != 192.0/400 {
		t.Errorf("hit rate %v, want 192/400", got)
	}
	if got := metricValue(t, fams, "sglang:spec_accept_length", lbl).GetGauge().GetValue(); ec.specDrafts == 0 || got != 1+ec.specAccepted/ec.specDrafts {
		t.Errorf("accept length %v, counters %+v", got, ec)
	}
}
