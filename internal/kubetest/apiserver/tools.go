//go:build tools

// Package apiserver pins the commands build.sh builds.
package apiserver

import (
	_ "go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
)
