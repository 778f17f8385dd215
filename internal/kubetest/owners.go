package kubetest

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// minimal pod template the apps objects need to be valid.
func template(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "server", Image: "vllm/vllm-openai:v0.11.0"}}}}
}

func controllerRef(meta metav1.Object, kind schema.GroupVersionKind) metav1.OwnerReference {
	return *metav1.NewControllerRef(meta, kind)
}

// Deployment creates Deployment name and, as its controller would, the
// ReplicaSet name-hash it owns; it returns the ReplicaSet's controller
// reference for the pods of that revision (no controller manager runs:
// the test makes the pods).
func (c *Cluster) Deployment(t testing.TB, ns, name, hash string) metav1.OwnerReference {
	t.Helper()
	ctx := context.Background()
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	d, err := c.Client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		d, err = c.Client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: appsv1.DeploymentSpec{Selector: sel, Template: template(name)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("kubetest: deployment %s: %v", name, err)
		}
	}
	rs, err := c.Client.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + hash, Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{controllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Selector: sel, Template: template(name)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: replicaset %s-%s: %v", name, hash, err)
	}
	return controllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
}

// StatefulSet creates StatefulSet name and returns its controller
// reference for its pods.
func (c *Cluster) StatefulSet(t testing.TB, ns, name string) metav1.OwnerReference {
	t.Helper()
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	s, err := c.Client.AppsV1().StatefulSets(ns).Create(context.Background(), &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.StatefulSetSpec{Selector: sel, Template: template(name), ServiceName: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: statefulset %s: %v", name, err)
	}
	return controllerRef(s, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))
}

// StatefulSetRevisions sets StatefulSet name's current and update
// revisions as its controller would: the two differ while a rolling
// update replaces its pods.
func (c *Cluster) StatefulSetRevisions(t testing.TB, ns, name, current, update string) {
	t.Helper()
	ctx := context.Background()
	s, err := c.Client.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("kubetest: statefulset %s: %v", name, err)
	}
	s.Status.CurrentRevision, s.Status.UpdateRevision = current, update
	if _, err := c.Client.AppsV1().StatefulSets(ns).UpdateStatus(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("kubetest: statefulset %s status: %v", name, err)
	}
}
