package main

import (
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
	k = sweep.KEDA{Target: "mine", Namespace: "ops"}
	kedaFromPod(&k, pod, map[string]bool{"keda-target": true, "keda-namespace": true})
	if k.Target != "mine" || k.Namespace != "ops" {
		t.Errorf("flags given: target %q namespace %q; want theirs", k.Target, k.Namespace)
	}
	k = sweep.KEDA{Target: "vllm"}
	kedaFromPod(&k, map[string]string{"owner": "StatefulSet llama", "namespace": "llm"}, nil)
	if k.Target != "vllm" || k.Namespace != "" {
		t.Errorf("a StatefulSet's pod: target %q namespace %q; want the defaults (KEDA's target here is a Deployment)", k.Target, k.Namespace)
	}
}
