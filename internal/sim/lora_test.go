package sim

import (
	"context"
	"testing"
	"time"
)

// A request naming an adapter shows it among lora_requests_info's running
// adapters while it runs (the base model's own requests never do), and
// the gauge goes back to none once it ends, valued the time of the change.
func TestLoRARequestsInfo(t *testing.T) {
	spec := stepModel("base", 5*time.Millisecond, 1e6)
	spec.Adapters = []string{"sql-lora", "chat-lora"}
	s, _ := newTestServer(t, Config{Models: []ModelSpec{spec}})
	info := func() (running, waiting string, at float64) {
		m := metricValue(t, pageOf(t, s.Handler()), "vllm:lora_requests_info", map[string]string{"max_lora": "2"})
		for _, l := range m.Label {
			switch l.GetName() {
			case "running_lora_adapters":
				running = l.GetValue()
			case "waiting_lora_adapters":
				waiting = l.GetValue()
			}
		}
		return running, waiting, m.GetGauge().GetValue()
	}
	if r, w, _ := info(); r != "" || w != "" {
		t.Fatalf("before any request: running %q, waiting %q", r, w)
	}
	base, err := s.Generate(context.Background(), Request{Model: "base", PromptTokens: 8, MaxTokens: 400, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	st, err := s.Generate(context.Background(), Request{Model: "sql-lora", PromptTokens: 8, MaxTokens: 40, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := info(); r != "sql-lora" {
		t.Errorf("running adapters %q while sql-lora streams, want sql-lora", r)
	}
	drain(t, st)
	eventually(t, 5*time.Second, "no adapter running", func() bool { r, _, _ := info(); return r == "" })
	if _, _, at := info(); at < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("gauge value %v, want the time of the last change", at)
	}
}
