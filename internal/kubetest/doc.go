// Package kubetest starts a real Kubernetes control plane for tests: etcd
// and kube-apiserver built from their Go modules (build.sh, module
// apiserver), on loopback, with token users and RBAC. There is no
// scheduler, controller manager or kubelet: tests create pods through the
// API and patch their status as a kubelet would, and serve their
// endpoints from network namespaces the test creates (the API server
// refuses to proxy to a loopback pod IP).
package kubetest
