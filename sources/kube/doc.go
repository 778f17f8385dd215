// Package kube finds model pods through the Kubernetes API server and
// reaches them through it: label conventions (llm-d, KServe,
// LeaderWorkerSet, NIM, Dynamo, app.kubernetes.io) or known engine images
// say which pods serve a model, annotations and named ports where their
// /metrics and API are, owners how replicas group; scrapes and probes go
// through the pods/proxy subresource (direct pod IPs in-cluster).
// docs/kubernetes.md.
package kube
