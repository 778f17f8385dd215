package main

import (
	"slices"
	"testing"

	"github.com/ttftop/ttftop/internal/sweep"
)

// TestKEDAFromPodNamesTheDeployment: sweep --kube points the
// ScaledObject at the found pod's Deployment and namespace, unless the
// flags named them; a pod under another owner leaves the defaults.
func TestKEDAFromPodNamesTheDeployment(t *testing.T) {
	pod := map[string]string{"owner": "Deployment qwen", "namespace": "llm"}
	k := sweep.KEDA{Target: "vllm"}
	kedaFromPod(&k, pod, nil)
	if k.Target != "qwen" || k.Namespace != "llm" {
		t.Errorf("from a Deployment's pod: target %q namespace %q; want qwen in llm", k.Target, k.Namespace)
	}
	if want := sweep.PodMatchers("llm", "qwen"); !slices.Equal(k.Matchers, want) || k.Assumes == "" {
		t.Errorf("matchers %q (assumes %q); want %q and where they come from", k.Matchers, k.Assumes, want)
	}
	k = sweep.KEDA{Target: "mine", Namespace: "ops"}
	kedaFromPod(&k, pod, map[string]bool{"keda-target": true, "keda-namespace": true})
	if k.Target != "mine" || k.Namespace != "ops" {
		t.Errorf("flags given: target %q namespace %q; want theirs", k.Target, k.Namespace)
	}
	if want := sweep.PodMatchers("ops", "mine"); !slices.Equal(k.Matchers, want) {
		t.Errorf("flags given: matchers %q; want %q", k.Matchers, want)
	}
	k = sweep.KEDA{Target: "vllm"}
	kedaFromPod(&k, map[string]string{"owner": "StatefulSet llama", "namespace": "llm"}, nil)
	if k.Target != "vllm" || k.Namespace != "" || k.Matchers != nil {
		t.Errorf("a StatefulSet's pod: target %q namespace %q; want the defaults (KEDA's target here is a Deployment)", k.Target, k.Namespace)
	}
}
