package kube

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ttftop/ttftop/telemetry"
)

// Pod is a model pod found in the cluster.
type Pod struct {
	Namespace, Name, Node, IP string
	Engine                    telemetry.Engine
	// Convention says how it was recognised ("llm-d.ai/role=decode",
	// "image vllm/vllm-openai:v0.11").
	Convention string
	// Role is prefill, decode or "".
	Role string
	// Owner is what deploys it ("Deployment qwen", "InferenceService
	// llama"), its replicas' group.
	Owner string
	// API is its OpenAI-compatible port (zero Number for a pod that
	// serves none: ScrapeOnly); Metrics its /metrics.
	API, Metrics port
	ScrapeOnly   bool
	// Ready is the pod's Ready condition; Reason, when not ready, is why
	// from its status ("CrashLoopBackOff: back-off 5m0s …", "Pending:
	// Unschedulable: 0/3 nodes …").
	Ready  bool
	Reason string
}

// Key is the pod's name in the views: namespace/name.
func (p Pod) Key() string { return p.Namespace + "/" + p.Name }

// Exporter is a dcgm-exporter pod: the GPUs of its node.
type Exporter struct {
	Namespace, Name, Node string
	Port                  int
}

// Skipped is a pod a convention names that is not measured, and why.
type Skipped struct {
	Pod, Reason string
}

// Result is what discovery found.
type Result struct {
	Pods      []Pod
	Exporters []Exporter
	Skipped   []Skipped
	// Warnings are what could not be read (an owner, the exporters'
	// namespaces) and what that leaves out.
	Warnings []string
}

// Discover lists the pods of the cluster's namespace (or all) matching
// selector, and says which serve models, where, and under what owner;
// and the dcgm-exporter pods of the cluster. Missing RBAC is an error
// naming the verb and resource.
func (c *Cluster) Discover(ctx context.Context, selector string) (Result, error) {
	list, err := c.client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return Result{}, c.explain(err, "list", "pods")
	}
	var r Result
	owners := ownerCache{}
	for i := range list.Items {
		pod := &list.Items[i]
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		m, ok, skip := classify(pod)
		if skip != "" {
			r.Skipped = append(r.Skipped, Skipped{Pod: pod.Namespace + "/" + pod.Name, Reason: skip})
		}
		if !ok {
			continue
		}
		p, err := c.describe(ctx, pod, m, owners, &r)
		if err != nil {
			r.Skipped = append(r.Skipped, Skipped{Pod: pod.Namespace + "/" + pod.Name, Reason: m.Convention + ": " + err.Error()})
			continue
		}
		r.Pods = append(r.Pods, p)
	}
	sort.Slice(r.Pods, func(i, j int) bool {
		a, b := r.Pods[i], r.Pods[j]
		if a.Owner != b.Owner {
			return a.Owner < b.Owner
		}
		return a.Key() < b.Key()
	})
	r.Exporters, err = c.exporters(ctx)
	if err != nil {
		r.Warnings = append(r.Warnings, "GPUs not joined: "+err.Error())
	}
	return r, nil
}

// describe fills a found pod's ports, owner and readiness.
func (c *Cluster) describe(ctx context.Context, pod *corev1.Pod, m match, owners ownerCache, r *Result) (Pod, error) {
	p := Pod{Namespace: pod.Namespace, Name: pod.Name, Node: pod.Spec.NodeName, IP: pod.Status.PodIP,
		Engine: m.Engine, Convention: m.Convention, Role: m.Role, ScrapeOnly: m.ScrapeOnly}
	var err error
	if p.Metrics, err = metricsPort(pod, m.Engine); err != nil {
		return p, err
	}
	if !m.ScrapeOnly {
		if p.API, err = apiPort(pod, m.Engine); err != nil {
			p.API = p.Metrics // one port serves both (vLLM, SGLang…)
			p.API.Path = ""
		}
	}
	p.Owner = m.Group
	if p.Owner == "" {
		owner, warn := c.owner(ctx, pod, owners)
		p.Owner = owner
		if warn != "" {
			r.Warnings = append(r.Warnings, warn)
		}
	}
	p.Ready, p.Reason = readiness(pod)
	if !p.Ready {
		if w := c.lastWarning(ctx, pod); w != "" {
			p.Reason += "; last warning: " + w
		}
	}
	return p, nil
}

// Describe is one line per found pod and skipped one, for stderr.
func (r Result) Describe() []string {
	var out []string
	for _, p := range r.Pods {
		role := ""
		if p.Role != "" {
			role = ", " + p.Role
		}
		state := ""
		if !p.Ready {
			state = "; not ready: " + p.Reason
		}
		out = append(out, fmt.Sprintf("found %s: %s%s under %s (%s; metrics :%d%s from %s)%s",
			p.Key(), p.Engine, role, p.Owner, p.Convention, p.Metrics.Number, p.Metrics.Path, p.Metrics.From, state))
	}
	for _, s := range r.Skipped {
		out = append(out, "left alone "+s.Pod+": "+s.Reason)
	}
	for _, e := range r.Exporters {
		out = append(out, fmt.Sprintf("dcgm-exporter %s/%s on node %s", e.Namespace, e.Name, e.Node))
	}
	out = append(out, r.Warnings...)
	return out
}

// Labels a found pod's rows carry.
const (
	LabelOwner     = "owner"     // "Deployment qwen", "InferenceService llama"
	LabelNamespace = "namespace" // the pod's namespace
	LabelRole      = "role"      // prefill or decode
	LabelNotReady  = "not_ready" // why the pod is not ready, from its status
)

// Labels are the pod's labels for its rows: owner, namespace, and role
// and not_ready when they apply.
func (p Pod) Labels() map[string]string {
	l := map[string]string{LabelOwner: p.Owner, LabelNamespace: p.Namespace}
	if p.Role != "" {
		l[LabelRole] = p.Role
	}
	if !p.Ready {
		l[LabelNotReady] = p.Reason
	}
	return l
}
