package kube

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// dcgmSelectors find dcgm-exporter pods as the GPU Operator and
// dcgm-exporter's Helm chart label them.
var dcgmSelectors = [...]string{"app=nvidia-dcgm-exporter", "app.kubernetes.io/name=dcgm-exporter"}

// dcgmPort is dcgm-exporter's default port.
const dcgmPort = 9400

// exporters finds the running dcgm-exporter pods, one per GPU node,
// wherever they are (usually the GPU Operator's namespace): across the
// cluster, or in the namespace looked at when the cluster may not be
// listed.
func (c *Cluster) exporters(ctx context.Context) ([]Exporter, error) {
	var out []Exporter
	seen := map[string]bool{}
	var errs []error
	for _, sel := range dcgmSelectors {
		list, err := c.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil && c.Namespace != "" {
			list, err = c.client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		}
		if err != nil {
			errs = append(errs, c.explain(err, "list", "pods"))
			continue
		}
		for _, pod := range list.Items {
			key := pod.Namespace + "/" + pod.Name
			if seen[key] || pod.Status.Phase != corev1.PodRunning || pod.Spec.NodeName == "" {
				continue
			}
			seen[key] = true
			port := dcgmPort
			if p, ok := named(&pod, "metrics"); ok {
				port = p.Number
			}
			out = append(out, Exporter{Namespace: pod.Namespace, Name: pod.Name, Node: pod.Spec.NodeName, Port: port})
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	return nil, errors.Join(errs...)
}
