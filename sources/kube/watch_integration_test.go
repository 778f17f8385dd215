//go:build integration

package kube_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ttftop/ttftop/internal/kubetest"
	"github.com/ttftop/ttftop/sources/kube"
)

// changes runs a Watch of cl and returns its changes as they come.
func changes(t *testing.T, cl *kube.Cluster) <-chan kube.Change {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan kube.Change, 64)
	done := make(chan error, 1)
	go func() { done <- cl.Watch(ctx, "", func(c kube.Change) { out <- c }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return out
}

// next is the next change, failing the test when none comes in time.
func next(t *testing.T, ch <-chan kube.Change) kube.Change {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(30 * time.Second): // a deadline, not synchronisation
		t.Fatal("no pod change within 30 s")
		return kube.Change{}
	}
}

func deletePod(t *testing.T, c *kubetest.Cluster, name string, grace *int64) {
	t.Helper()
	if err := c.Client.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: grace}); err != nil {
		t.Fatal(err)
	}
}

// TestKubeWatchSaysRolloutsLossesAndReadiness: against a real API server,
// the watch reports the pods there as added, a pod going into
// CrashLoopBackOff with its reason, a replica deleted outside a rollout
// as leaving then removed (not rolled out), and an old revision's pod
// deleted once a new ReplicaSet of the same Deployment has a ready pod
// as rolled out, naming what took over.
func TestKubeWatchSaysRolloutsLossesAndReadiness(t *testing.T) {
	c := kubetest.Start(t)
	c.Namespace(t, ns)
	oldRS := c.Deployment(t, ns, "qwen", "5d4f8")
	run := func(name string, owner metav1.OwnerReference) *corev1.Pod {
		p := pod(name, map[string]string{"app.kubernetes.io/name": "vllm"}, "vllm/vllm-openai:v0.11.0")
		p.OwnerReferences = []metav1.OwnerReference{owner}
		return c.RunPod(t, p, kubetest.Status{IP: "10.1.0.5"})
	}
	a, _ := run("qwen-5d4f8-a", oldRS), run("qwen-5d4f8-b", oldRS)
	ch := changes(t, connect(t, c, kubetest.Admin))
	added := map[string]bool{}
	for range 2 {
		got := next(t, ch)
		if got.Kind != kube.PodAdded || !got.Pod.Ready || got.Pod.Owner != "Deployment qwen" {
			t.Fatalf("first changes: %+v, want ready pods of Deployment qwen added", got)
		}
		added[got.Pod.Name] = true
	}
	if !added["qwen-5d4f8-a"] || !added["qwen-5d4f8-b"] {
		t.Fatalf("added %v", added)
	}

	c.SetStatus(t, a, kubetest.Status{IP: "10.1.0.5", Waiting: "CrashLoopBackOff", Message: "back-off 40s restarting failed container", Restarts: 3})
	if got := next(t, ch); got.Kind != kube.PodNotReady || got.Pod.Name != a.Name || !strings.HasPrefix(got.Why, "CrashLoopBackOff: back-off 40s") || got.Pod.Ready {
		t.Fatalf("after the crash: %+v, want %s not ready with its CrashLoopBackOff reason", got, a.Name)
	}
	c.SetStatus(t, a, kubetest.Status{IP: "10.1.0.5"})
	if got := next(t, ch); got.Kind != kube.PodReady || got.Pod.Name != a.Name {
		t.Fatalf("after the recovery: %+v, want %s ready", got, a.Name)
	}

	// Lost: a graceful delete leaves it terminating (no kubelet ends it
	// here), then a forced one removes it.
	deletePod(t, c, a.Name, nil)
	if got := next(t, ch); got.Kind != kube.PodLeaving || got.RolledOut || got.Pod.Name != a.Name || got.Why != "deleted outside a rollout" {
		t.Fatalf("after deleting %s: %+v, want it leaving outside a rollout", a.Name, got)
	}
	zero := int64(0)
	deletePod(t, c, a.Name, &zero)
	if got := next(t, ch); got.Kind != kube.PodRemoved || got.RolledOut || got.Pod.Name != a.Name {
		t.Fatalf("after removing %s: %+v, want it removed outside a rollout", a.Name, got)
	}

	// Rollout: the new ReplicaSet's pod is ready, then the old one's goes.
	newRS := c.Deployment(t, ns, "qwen", "7c9b2")
	run("qwen-7c9b2-c", newRS)
	// Created, then its status set: added pending, then ready.
	if got := next(t, ch); got.Kind != kube.PodAdded || got.Pod.Name != "qwen-7c9b2-c" {
		t.Fatalf("after the new revision's pod: %+v, want it added", got)
	} else if !got.Pod.Ready {
		if got := next(t, ch); got.Kind != kube.PodReady || got.Pod.Name != "qwen-7c9b2-c" {
			t.Fatalf("after the new revision's pod's status: %+v, want it ready", got)
		}
	}
	deletePod(t, c, "qwen-5d4f8-b", &zero)
	got := next(t, ch)
	if got.Kind == kube.PodLeaving && got.RolledOut { // the API server marks it deleting first
		got = next(t, ch)
	}
	if got.Kind != kube.PodRemoved || !got.RolledOut || got.Pod.Name != "qwen-5d4f8-b" {
		t.Fatalf("after the old revision's pod went: %+v, want it removed as rolled out", got)
	}
	if want := "rolled out: ReplicaSet qwen-7c9b2 of Deployment qwen took over (llm/qwen-7c9b2-c ready)"; got.Why != want {
		t.Errorf("why %q, want %q", got.Why, want)
	}
}

// TestKubeWatchForbiddenSaysWhat: a user who may list pods but not watch
// them is told, once, which verb on which resource in which namespace is
// missing, and the watch ends rather than retrying quietly.
func TestKubeWatchForbiddenSaysWhat(t *testing.T) {
	c := kubetest.Start(t, "lister")
	c.Namespace(t, ns)
	c.Grant(t, "lister", ns, rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"pods"}})
	cl := connect(t, c, "lister")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a deadline, not synchronisation
	defer cancel()
	err := cl.Watch(ctx, "", func(kube.Change) {})
	t.Logf("said: %v", err)
	want := `kube: RBAC: missing permission to watch pods in namespace llm (grant verb "watch" on resource "pods")`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `User "lister" cannot watch resource "pods"`) {
		t.Fatalf("watch without the verb: %v; want %q and who was refused", err, want)
	}
	if ctx.Err() != nil {
		t.Error("the watch ended only at the deadline")
	}
}
