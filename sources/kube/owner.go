package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ownerCache remembers each ReplicaSet's owner for one discovery.
type ownerCache map[string]string

// owner is what deploys pod: the controller of its controlling
// ReplicaSet (a Deployment), else its controller (StatefulSet, Job…),
// else the pod itself. warn says what could not be read.
func (c *Cluster) owner(ctx context.Context, pod *corev1.Pod, cache ownerCache) (owner, warn string) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return "Pod " + pod.Name, ""
	}
	if ref.Kind != "ReplicaSet" {
		return ref.Kind + " " + ref.Name, ""
	}
	key := pod.Namespace + "/" + ref.Name
	if o, ok := cache[key]; ok {
		return o, ""
	}
	rs, err := c.client.AppsV1().ReplicaSets(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		o := "ReplicaSet " + ref.Name
		cache[key] = o
		return o, "owner of ReplicaSet " + key + " not read (its pods are grouped under it): " + c.explain(err, "get", "replicasets.apps").Error()
	}
	o := "ReplicaSet " + rs.Name
	if d := metav1.GetControllerOf(rs); d != nil {
		o = d.Kind + " " + d.Name
	}
	cache[key] = o
	return o, ""
}
