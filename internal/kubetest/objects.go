package kubetest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Namespace creates ns and its default ServiceAccount, which pods need
// and which no controller manager creates here; an existing one is kept.
func (c *Cluster) Namespace(t testing.TB, ns string) {
	t.Helper()
	ctx := context.Background()
	_, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("kubetest: namespace %s: %v", ns, err)
	}
	_, err = c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("kubetest: default service account in %s: %v", ns, err)
	}
}

// Grant gives user the rules in namespace ns (a Role and RoleBinding
// named after the user), or cluster-wide when ns is "".
func (c *Cluster) Grant(t testing.TB, user, ns string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	meta := metav1.ObjectMeta{Name: "kubetest-" + user, Namespace: ns}
	var err error
	if ns == "" {
		_, err = c.Client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta, Rules: rules}, metav1.CreateOptions{})
		if err == nil {
			_, err = c.Client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta, Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: meta.Name}}, metav1.CreateOptions{})
		}
	} else {
		_, err = c.Client.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: meta, Rules: rules}, metav1.CreateOptions{})
		if err == nil {
			_, err = c.Client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta, Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: meta.Name}}, metav1.CreateOptions{})
		}
	}
	if err != nil {
		t.Fatalf("kubetest: granting %s: %v", user, err)
	}
}

// Status is what a kubelet would report for a pod.
type Status struct {
	IP string
	// Phase defaults to Running; Ready to true for a Running pod.
	Phase corev1.PodPhase
	// NotReady leaves a Running pod's Ready condition false.
	NotReady bool
	// Waiting is a container's waiting reason (CrashLoopBackOff,
	// ImagePullBackOff, …) with its message; Restarts its restart count.
	Waiting, Message string
	Restarts         int32
}

// RunPod creates pod (in a namespace made with Namespace) and sets its
// status as a kubelet would: node, IP, phase, conditions and each
// container's state. It returns the pod as stored.
func (c *Cluster) RunPod(t testing.TB, pod *corev1.Pod, st Status) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	if pod.Spec.NodeName == "" {
		pod.Spec.NodeName = "node-1"
	}
	created, err := c.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: creating pod %s: %v", pod.Name, err)
	}
	created.Status = kubeletStatus(created, st)
	updated, err := c.Client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("kubetest: pod %s status: %v", pod.Name, err)
	}
	return updated
}

// SetStatus sets a running pod's status anew, as its kubelet would when
// its containers change (ready, crashing).
func (c *Cluster) SetStatus(t testing.TB, pod *corev1.Pod, st Status) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	cur, err := c.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("kubetest: pod %s: %v", pod.Name, err)
	}
	cur.Status = kubeletStatus(cur, st)
	updated, err := c.Client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("kubetest: pod %s status: %v", pod.Name, err)
	}
	return updated
}

func kubeletStatus(pod *corev1.Pod, st Status) corev1.PodStatus {
	now := metav1.NewTime(time.Now())
	phase := st.Phase
	if phase == "" {
		phase = corev1.PodRunning
	}
	ready := phase == corev1.PodRunning && !st.NotReady && st.Waiting == ""
	s := corev1.PodStatus{Phase: phase, StartTime: &now, HostIP: "10.0.0.1"}
	if st.IP != "" {
		s.PodIP, s.PodIPs = st.IP, []corev1.PodIP{{IP: st.IP}}
	}
	cond := func(kind corev1.PodConditionType, ok bool) corev1.PodCondition {
		status := corev1.ConditionFalse
		if ok {
			status = corev1.ConditionTrue
		}
		return corev1.PodCondition{Type: kind, Status: status, LastTransitionTime: now}
	}
	s.Conditions = []corev1.PodCondition{cond(corev1.PodScheduled, true), cond(corev1.PodInitialized, phase != corev1.PodPending),
		cond(corev1.ContainersReady, ready), cond(corev1.PodReady, ready)}
	for _, ctr := range pod.Spec.Containers {
		cs := corev1.ContainerStatus{Name: ctr.Name, Image: ctr.Image, Ready: ready, RestartCount: st.Restarts}
		switch {
		case st.Waiting != "":
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: st.Waiting, Message: st.Message}
		case phase == corev1.PodRunning:
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
		default:
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		s.ContainerStatuses = append(s.ContainerStatuses, cs)
	}
	return s
}

// Event records a Warning event about pod, as a kubelet or the scheduler
// would, last seen at.
func (c *Cluster) Event(t testing.TB, pod *corev1.Pod, reason, message string, at time.Time) {
	t.Helper()
	ts := metav1.NewTime(at)
	_, err := c.Client.CoreV1().Events(pod.Namespace).Create(context.Background(), &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, APIVersion: "v1"},
		Reason:         reason, Message: message, Type: corev1.EventTypeWarning,
		FirstTimestamp: ts, LastTimestamp: ts, Count: 1, Source: corev1.EventSource{Component: "kubetest"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: event %s on %s: %v", reason, pod.Name, err)
	}
}
