package sim

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A client that disconnects mid-stream frees its batch slot at once (the
// queued request behind it starts) and is counted as an abort.
func TestDisconnectFreesSlotAndCountsAbort(t *testing.T) {
	spec := stepModel("m", 10*time.Millisecond, 1e6)
	spec.MaxBatch, spec.MaxBatchedTokens = 1, 2048
	s, ts := newTestServer(t, Config{Models: []ModelSpec{spec}})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/completions",
		strings.NewReader(`{"model":"m","stream":true,"max_tokens":5000,"ignore_eos":true,"prompt":"a"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for i := 0; i < 3; i++ { // a few tokens arrive
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	// A second request queues behind the first.
	second := make(chan streamResult)
	go func() {
		second <- streamRequest(t, context.Background(), ts.URL, "/v1/completions",
			`{"model":"m","stream":true,"max_tokens":3,"ignore_eos":true,"prompt":"b"}`)
	}()
	eventually(t, 2*time.Second, "second request queued", func() bool { return s.Stats()[0].Waiting == 1 })
	gone := time.Now()
	cancel()
	resp.Body.Close()
	r := <-second
	if r.status != 200 || r.tokens != 3 {
		t.Fatalf("queued request: %+v", r)
	}
	// The slot was freed within a step or two, not after 5000 tokens.
	if d := r.times[0].Sub(gone); d > 500*time.Millisecond {
		t.Errorf("queued request's first token %v after the disconnect", d)
	}
	fams := scrape(t, ts.URL)
	lbl := func(reason string) map[string]string {
		return map[string]string{"model_name": "m", "finished_reason": reason}
	}
	if got := metricValue(t, fams, "vllm:request_success_total", lbl("abort")).GetCounter().GetValue(); got != 1 {
		t.Errorf("abort count %v", got)
	}
	if got := metricValue(t, fams, "vllm:request_success_total", lbl("length")).GetCounter().GetValue(); got != 1 {
		t.Errorf("length count %v", got)
	}
	if st := s.Stats()[0]; st.Running != 0 || st.KVCacheUsage != 0 {
		t.Errorf("after: %+v", st)
	}
}

// A request cancelled while still waiting leaves the queue and counts as
// an abort too (Go API path).
func TestAbortWhileWaiting(t *testing.T) {
	spec := stepModel("m", 10*time.Millisecond, 1e6)
	spec.MaxBatch, spec.MaxBatchedTokens = 1, 2048
	s, _ := newTestServer(t, Config{Models: []ModelSpec{spec}})
	first, err := s.Generate(context.Background(), Request{Prompt: "a", MaxTokens: 5000, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	ctx, cancel := context.WithCancel(context.Background())
	second, err := s.Generate(ctx, Request{Prompt: "b", MaxTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Second, "queued", func() bool { return s.Stats()[0].Waiting == 1 })
	cancel()
	if _, _, err := second.Recv(); err != ErrAborted {
		t.Errorf("Recv after cancel: %v", err)
	}
	if st := s.Stats()[0]; st.Waiting != 0 {
		t.Errorf("still waiting: %+v", st)
	}
}

// Close stops everything: no goroutine of the simulator survives, even
// with background load, live streams and aborted clients.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	cfg := DemoConfig()
	cfg.Models = []ModelSpec{stepModel("m", 5*time.Millisecond, 1e6), stepModel("n", 7*time.Millisecond, 1e6)}
	cfg.Scenario = Scenario{Events: []Event{{At: 0, Kind: EventBurst, Model: "n", Streams: 3, For: time.Hour}}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{}}
	ctx, cancel := context.WithCancel(context.Background())
	for i := 0; i < 4; i++ {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/completions",
				strings.NewReader(`{"model":"m","stream":true,"max_tokens":4000,"prompt":"x"}`))
			if resp, err := client.Do(req); err == nil {
				bufio.NewReader(resp.Body).ReadString('\n')
				if i%2 == 0 {
					resp.Body.Close() // disconnect mid-stream
					return
				}
				for {
					if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
						resp.Body.Close()
						return
					}
				}
			}
		}()
	}
	if resp, err := client.Get(s.DCGMURL() + "/metrics"); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	time.Sleep(300 * time.Millisecond)
	s.Close()
	cancel()
	client.CloseIdleConnections()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before, %d after Close:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
