package kube

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/telemetry"
)

// Annotations Prometheus' Kubernetes scrape configs read.
const (
	annotationPort = "prometheus.io/port"
	annotationPath = "prometheus.io/path"
)

// port is a pod port with where it came from, for the found label.
type port struct {
	Number int
	Path   string // /metrics, or the annotation's
	From   string // "prometheus.io/port", "port named metrics", "vllm's default"
}

// metricsPort is where the pod's /metrics is: the prometheus.io
// annotations, then a container port named metrics or http, then the
// engine's default port.
func metricsPort(pod *corev1.Pod, e telemetry.Engine) (port, error) {
	path := "/metrics"
	if p := pod.Annotations[annotationPath]; p != "" {
		path = p
	}
	if v := pod.Annotations[annotationPort]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 65535 {
			return port{}, fmt.Errorf("annotation %s=%q is not a port", annotationPort, v)
		}
		return port{Number: n, Path: path, From: annotationPort}, nil
	}
	if p, ok := named(pod, "metrics", "http"); ok {
		p.Path = path
		return p, nil
	}
	return defaultPort(e, path)
}

// apiPort is where the pod's OpenAI-compatible API is: a container port
// named http (or openai, http1, api), then the engine's default port.
func apiPort(pod *corev1.Pod, e telemetry.Engine) (port, error) {
	if p, ok := named(pod, "http", "openai", "http1", "api"); ok {
		return p, nil
	}
	return defaultPort(e, "")
}

// named is the first container port carrying one of names, in names'
// order.
func named(pod *corev1.Pod, names ...string) (port, bool) {
	for _, n := range names {
		for _, c := range pod.Spec.Containers {
			for _, p := range c.Ports {
				if p.Name == n && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) {
					return port{Number: int(p.ContainerPort), From: "port named " + n}, true
				}
			}
		}
	}
	return port{}, false
}

func defaultPort(e telemetry.Engine, path string) (port, error) {
	if n := engines.DefaultPort(e); n != 0 {
		return port{Number: n, Path: path, From: string(e) + "'s default"}, nil
	}
	if e == "" {
		return port{}, fmt.Errorf("no port annotation or named port, and no known engine for a default")
	}
	return port{}, fmt.Errorf("no port annotation or named port, and no default port known for %s", e)
}
