package monitor

import (
	"context"
	"testing"
	"time"

	"github.com/ttftop/ttftop/sources/kube"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// A pod found not ready at start has its failed probes left out of its
// error rate from the first one, before the watch says anything; once
// the watch says it is ready, a failed probe counts.
func TestNotReadyPodsFailedProbesLeftOut(t *testing.T) {
	m := New(Options{})
	pod := kube.Pod{Namespace: "llm", Name: "vllm-0", Ready: false, Reason: "CrashLoopBackOff"}
	changes := make(chan kube.Change)
	m.AddPodWatch("kube:test", []kube.Pod{pod}, func(ctx context.Context, report func(kube.Change)) error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case ch := <-changes:
				report(ch)
			}
		}
	}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()

	const endpoint = "llm/vllm-0/qwen"
	source := telemetry.SourceProbe.At("https://api/api/v1/namespaces/llm/pods/vllm-0:8000/proxy/v1/chat/completions")
	fail := func() {
		for _, o := range probe.Observations(&probe.Result{ErrorKind: probe.ErrHTTPStatus, Err: "503"}, endpoint, source, time.Second, time.Now()) {
			m.Observe(o)
		}
	}
	errorRate := func() (float64, bool) {
		s, ok := m.Store.ClientSignal(endpoint, telemetry.ErrorRate, time.Now(), time.Minute)
		if !ok || s.Value == nil {
			return 0, false
		}
		return *s.Value, true
	}
	fail()
	fail()
	if r, ok := errorRate(); ok {
		t.Fatalf("a not-ready pod's failed probes counted: error rate %v%%", r)
	}
	ready := pod
	ready.Ready, ready.Reason = true, ""
	changes <- kube.Change{Kind: kube.PodReady, Pod: ready}
	changes <- kube.Change{Kind: kube.PodReady, Pod: ready} // the first is handled once the second is taken
	fail()
	if r, ok := errorRate(); !ok || r != 100 {
		t.Errorf("a ready pod's failed probe: error rate %v%% (%v), want 100%% of the one counted", r, ok)
	}
}
