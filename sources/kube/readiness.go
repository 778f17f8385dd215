package kube

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// readiness is the pod's Ready condition and, when not ready, why, from
// its status: a waiting or terminated container's reason and message
// first (CrashLoopBackOff, ImagePullBackOff, OOMKilled), then the Ready
// or PodScheduled condition's, then its phase.
func readiness(pod *corev1.Pod) (bool, string) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true, ""
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" {
			return false, join(w.Reason, w.Message) + restarts(cs)
		}
		if t := cs.State.Terminated; t != nil {
			return false, join(t.Reason, t.Message) + restarts(cs)
		}
	}
	for _, kind := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodReady} {
		for _, c := range pod.Status.Conditions {
			if c.Type == kind && c.Status != corev1.ConditionTrue && (c.Reason != "" || c.Message != "") {
				return false, join(string(pod.Status.Phase), c.Reason, c.Message)
			}
		}
	}
	return false, join(string(pod.Status.Phase), "not ready")
}

// restarts is a container's restart count, in parentheses ("" for none).
func restarts(cs corev1.ContainerStatus) string {
	switch cs.RestartCount {
	case 0:
		return ""
	case 1:
		return " (1 restart)"
	}
	return fmt.Sprintf(" (%d restarts)", cs.RestartCount)
}

func join(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ": ")
}
