package kube

import (
	"cmp"
	"context"
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"
)

// ChangeKind says what happened to a model pod.
type ChangeKind string

// Pod changes a Watch reports.
const (
	// PodAdded: a model pod appeared (ready or not: Pod.Ready, Reason).
	PodAdded ChangeKind = "added"
	// PodReady: a known pod became ready.
	PodReady ChangeKind = "ready"
	// PodNotReady: a known pod stopped being ready, or its reason or
	// address changed while not ready.
	PodNotReady ChangeKind = "not ready"
	// PodLeaving: a known pod is being deleted (terminating).
	PodLeaving ChangeKind = "leaving"
	// PodRemoved: a known pod is no longer in the API server.
	PodRemoved ChangeKind = "removed"
)

// Change is one model pod's change.
type Change struct {
	Kind ChangeKind
	Pod  Pod
	// RolledOut, for PodLeaving and PodRemoved, says the pod left in a
	// rollout: another revision of its owner has a ready pod taking
	// over. Why says which, or why the pod is not ready.
	RolledOut bool
	Why       string
}

// watched is what the watch remembers of a model pod.
type watched struct {
	pod Pod
	// revision is the revision of its owner it runs, as said: its
	// controlling ReplicaSet ("ReplicaSet qwen-7c9b2"), else its
	// controller-revision-hash label (StatefulSet, LeaderWorkerSet's
	// leader StatefulSet) or LeaderWorkerSet's template-revision-hash
	// ("revision qwen-7c9b2"); "" when it has none.
	revision    string
	statefulSet string // its controlling StatefulSet ("" for none)
	leaving     *Change
}

// Revision labels of the pods of StatefulSets (and DaemonSets) and of
// LeaderWorkerSets.
const (
	labelControllerRevision = "controller-revision-hash"
	labelLWSRevision        = "leaderworkerset.sigs.k8s.io/template-revision-hash"
)

// Watch follows the model pods of the cluster's namespace (or all)
// matching selector and calls report with each change, from one
// goroutine, until ctx is done. The pods there when it starts are
// reported as PodAdded first.
func (c *Cluster) Watch(ctx context.Context, selector string, report func(Change)) error {
	lw := cache.NewFilteredListWatchFromClient(c.client.CoreV1().RESTClient(), "pods", c.Namespace,
		func(o *metav1.ListOptions) {
			o.LabelSelector = selector
			o.FieldSelector = fields.Everything().String()
		})
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	w := &podWatch{c: c, ctx: ctx, report: report, owners: ownerCache{}, pods: map[string]*watched{}}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.seen(o) },
		UpdateFunc: func(_, o any) { w.seen(o) },
		DeleteFunc: w.removed,
	})
	if err != nil {
		return fmt.Errorf("kube: watching pods: %w", err)
	}
	// A refusal by RBAC does not pass by retrying: the watch ends with
	// which verb on which resource is missing. Other errors (the API
	// server restarting, a network cut) are retried by the informer.
	ictx, stop := context.WithCancel(ctx)
	defer stop()
	refused := make(chan error, 1)
	err = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		if apierrors.IsForbidden(err) {
			verb, resource := refusedVerb(err, "watch", "pods")
			select {
			case refused <- c.explain(err, verb, resource):
			default: // said once
			}
			stop()
			return
		}
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
	if err != nil {
		return fmt.Errorf("kube: watching pods: %w", err)
	}
	inf.RunWithContext(ictx)
	select {
	case err := <-refused:
		return err
	default:
		return nil
	}
}

// refusedVerb reads which verb on which resource the API server refused
// from its answer (`User "u" cannot watch resource "pods" in API group
// ""…`); def when it does not say.
func refusedVerb(err error, defVerb, defResource string) (verb, resource string) {
	m := refusal.FindStringSubmatch(err.Error())
	if m == nil {
		return defVerb, defResource
	}
	resource = m[2]
	if m[3] != "" {
		resource += "." + m[3]
	}
	return m[1], resource
}

// refusal is the API server's RBAC refusal: verb, resource, API group.
var refusal = regexp.MustCompile(`cannot (\w+) resource "([^"]+)"(?: in API group "([^"]*)")?`)

// podWatch turns the informer's pod events into Changes.
type podWatch struct {
	c      *Cluster
	ctx    context.Context
	report func(Change)
	owners ownerCache
	pods   map[string]*watched
}

// seen handles a pod added or updated.
func (w *podWatch) seen(o any) {
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	key := pod.Namespace + "/" + pod.Name
	old := w.pods[key]
	if old != nil && old.leaving != nil {
		return // said once: its last states are the termination's
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || pod.DeletionTimestamp != nil {
		if old != nil {
			ch := w.judgeLeaving(old)
			old.leaving = &ch
			w.report(ch)
		}
		return
	}
	m, model, _ := classify(pod)
	if !model {
		return
	}
	var r Result
	p, err := w.c.describe(w.ctx, pod, m, w.owners, &r)
	if err != nil {
		return
	}
	now := &watched{pod: p}
	if rev := cmp.Or(pod.Labels[labelControllerRevision], pod.Labels[labelLWSRevision]); rev != "" {
		now.revision = "revision " + rev
	}
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "ReplicaSet" {
		now.revision = "ReplicaSet " + ref.Name
	} else if ref != nil && ref.Kind == "StatefulSet" {
		now.statefulSet = ref.Name
	}
	w.pods[key] = now
	switch {
	case old == nil:
		w.report(Change{Kind: PodAdded, Pod: p, Why: p.Reason})
	case p.Ready && !old.pod.Ready:
		w.report(Change{Kind: PodReady, Pod: p})
	case !p.Ready && (old.pod.Ready || p.Reason != old.pod.Reason || p.IP != old.pod.IP):
		w.report(Change{Kind: PodNotReady, Pod: p, Why: p.Reason})
	}
}

// removed handles a pod deleted from the API server.
func (w *podWatch) removed(o any) {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	key := pod.Namespace + "/" + pod.Name
	old := w.pods[key]
	if old == nil {
		return
	}
	delete(w.pods, key)
	ch := w.judgeLeaving(old)
	if old.leaving != nil {
		ch = *old.leaving
	}
	ch.Kind = PodRemoved
	w.report(ch)
}

// judgeLeaving says whether a leaving pod is rolled out: one whose owner
// has a ready pod at another revision (a Deployment's newer ReplicaSet
// scaling up while the pod's scales down), or a StatefulSet's pod whose
// StatefulSet is updating to another revision (it replaces its pods one
// by one under the same names: nothing new is ready before the first
// goes). Any other is a replica lost.
func (w *podWatch) judgeLeaving(p *watched) Change {
	ch := Change{Kind: PodLeaving, Pod: p.pod, Why: "deleted outside a rollout"}
	if p.revision == "" {
		return ch
	}
	for _, o := range w.pods {
		if o != p && o.leaving == nil && o.pod.Ready && o.pod.Owner == p.pod.Owner && o.revision != "" && o.revision != p.revision {
			ch.RolledOut = true
			ch.Why = fmt.Sprintf("rolled out: %s of %s took over (%s ready)", o.revision, p.pod.Owner, o.pod.Key())
			return ch
		}
	}
	if p.statefulSet == "" {
		return ch
	}
	sts, err := w.c.client.AppsV1().StatefulSets(p.pod.Namespace).Get(w.ctx, p.statefulSet, metav1.GetOptions{})
	if err != nil {
		ch.Why += " as far as can be told (StatefulSet " + p.statefulSet + "'s revision not read: " + w.c.explain(err, "get", "statefulsets.apps").Error() + ")"
		return ch
	}
	if to := "revision " + sts.Status.UpdateRevision; sts.Status.UpdateRevision != "" && to != p.revision {
		ch.RolledOut = true
		ch.Why = fmt.Sprintf("rolled out: StatefulSet %s is updating to %s (the pod ran %s)", sts.Name, to, p.revision)
	}
	return ch
}
