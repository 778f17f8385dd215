package sim

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// When decode growth overflows the KV pool, the newest sequences are
// preempted and recomputed (vLLM V1 recompute preemption): every stream
// still gets all its tokens exactly once, and the preemptions show up.
func TestKVPreemption(t *testing.T) {
	spec := stepModel("m", 2*time.Millisecond, 1e6)
	// Shrink the pool to 25 blocks (400 tokens); four 100+150-token
	// requests cannot all fit. (A real pool that small would need absurd
	// KV sizes and make every step slow.)
	kvBlocksOverride = 25
	defer func() { kvBlocksOverride = 0 }()
	s, ts := newTestServer(t, Config{Models: []ModelSpec{spec}})
	var wg sync.WaitGroup
	results := make([]streamResult, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = streamRequest(t, context.Background(), ts.URL, "/v1/completions",
				`{"model":"m","stream":true,"max_tokens":150,"ignore_eos":true,"stream_options":{"include_usage":true},"prompt":"`+
					strings.Repeat("abcd", 99)+string(rune('a'+i))+`"}`)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	peak := 0.0
	for watching := true; watching; {
		select {
		case <-done:
			watching = false
		case <-time.After(5 * time.Millisecond):
			peak = max(peak, s.Stats()[0].KVCacheUsage)
		}
	}
	for i, r := range results {
		if r.tokens != 150 || r.usage["completion_tokens"] != 150 || r.finish != "length" {
			t.Errorf("stream %d: %d tokens, usage %v, finish %q", i, r.tokens, r.usage, r.finish)
		}
	}
	fams := scrape(t, ts.URL)
	lbl := map[string]string{"model_name": "m"}
	t.Logf("preemptions %v, stats %+v", metricValue(t, fams, "vllm:num_preemptions_total", lbl).GetCounter().GetValue(), s.Stats()[0])
	if got := metricValue(t, fams, "vllm:num_preemptions_total", lbl).GetCounter().GetValue(); got == 0 {
		t.Error("no preemptions recorded")
	}
	if got := metricValue(t, fams, "vllm:generation_tokens_total", lbl).GetCounter().GetValue(); got != 600 {
		t.Errorf("generation tokens %v", got)
	}
	if peak > 1 || peak < 0.8 {
		t.Errorf("peak KV usage %v", peak)
	}
	if st := s.Stats()[0]; st.KVCacheUsage != 0 {
		t.Errorf("KV not freed: %+v", st)
	}
}
