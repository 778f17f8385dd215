package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestReadinessReasons(t *testing.T) {
	crash := corev1.PodStatus{Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "vllm", RestartCount: 6,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s restarting failed container=vllm"}}}}}
	pending := corev1.PodStatus{Phase: corev1.PodPending,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}}}
	notReady := corev1.PodStatus{Phase: corev1.PodRunning,
		Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [vllm]"}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "vllm", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
	ready := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	for _, tc := range []struct {
		name   string
		status corev1.PodStatus
		ready  bool
		reason string
	}{
		{"crash loop", crash, false, "CrashLoopBackOff: back-off 5m0s restarting failed container=vllm (6 restarts)"},
		{"unschedulable", pending, false, "Pending: Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu."},
		{"readiness probe failing", notReady, false, "Running: ContainersNotReady: containers with unready status: [vllm]"},
		{"ready", ready, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason := readiness(&corev1.Pod{Status: tc.status})
			if ok != tc.ready || reason != tc.reason {
				t.Errorf("readiness = %v, %q; want %v, %q", ok, reason, tc.ready, tc.reason)
			}
		})
	}
}
