package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// lastWarning is the pod's latest Warning event, "Reason: message"
// (FailedScheduling, FailedMount, BackOff…); "" when there is none or
// events may not be read (the status's reason stands alone then).
func (c *Cluster) lastWarning(ctx context.Context, pod *corev1.Pod) string {
	sel := fields.Set{"involvedObject.name": pod.Name, "involvedObject.uid": string(pod.UID), "type": corev1.EventTypeWarning}.AsSelector().String()
	list, err := c.client.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil || len(list.Items) == 0 {
		return ""
	}
	last := list.Items[0]
	for _, e := range list.Items[1:] {
		if eventTime(e).Time.After(eventTime(last).Time) {
			last = e
		}
	}
	return join(last.Reason, last.Message)
}

func eventTime(e corev1.Event) metav1.Time {
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp
	}
	if !e.EventTime.IsZero() {
		return metav1.Time{Time: e.EventTime.Time}
	}
	return e.FirstTimestamp
}
