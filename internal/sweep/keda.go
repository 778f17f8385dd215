package sweep

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// KEDA says where the ScaledObject points.
type KEDA struct {
	Name          string // ScaledObject name; default derived from the model
	Namespace     string // "" = none written (kubectl's current namespace)
	Target        string // Deployment to scale
	PrometheusURL string // serverAddress of the trigger
	MinReplicas   int
	MaxReplicas   int
	Window        string // rate window of the query, e.g. "2m"
	// Matchers narrow the query's series to the target's pods, with the
	// labels the cluster's Prometheus gives them (PodMatchers); Assumes
	// says where those labels come from, for the snippet's header.
	Matchers []string
	Assumes  string
}

// PodMatchers select the series of Deployment name's pods in namespace
// by the target labels prometheus-operator (kube-prometheus) gives what
// a PodMonitor or ServiceMonitor scrapes: namespace and pod, from
// __meta_kubernetes_namespace and __meta_kubernetes_pod_name. A
// Deployment's pods are named name-<pod-template-hash>-<5 characters>.
func PodMatchers(namespace, name string) []string {
	return []string{"namespace=" + strconv.Quote(namespace),
		"pod=~" + strconv.Quote(regexp.QuoteMeta(name)+"-[a-z0-9]+-[a-z0-9]{5}")}
}

// Snippet is a KEDA ScaledObject with tr, the prometheus trigger
// TriggerOf derives from the knee. It uses metricType Value: KEDA then
// scales to ceil(replicas × value / threshold), adding replicas as the
// load passes what the knee sustained — the right reading for a latency,
// which does not divide across replicas as a queue length would.
func Snippet(k KEDA, r *Report, tr Trigger) (string, error) {
	if r.Knee == nil {
		return "", errors.New("no knee: nothing to scale at")
	}
	name := k.Name
	if name == "" {
		name = "tpot-" + dnsLabel(r.Model)
	}
	so := scaledObject{APIVersion: "keda.sh/v1alpha1", Kind: "ScaledObject"}
	so.Metadata.Name, so.Metadata.Namespace = name, k.Namespace
	so.Spec.ScaleTargetRef.Name = k.Target
	so.Spec.MinReplicaCount, so.Spec.MaxReplicaCount = k.MinReplicas, k.MaxReplicas
	// Without traffic the value is NaN (0/0) or empty; KEDA's default
	// turns that into 0 and scales in during the outage that should scale
	// out. As errors (ignoreNullValues "false") they reach the fallback.
	so.Spec.Fallback.FailureThreshold = 3
	so.Spec.Fallback.Replicas = max(k.MinReplicas, (k.MaxReplicas+1)/2)
	so.Spec.Triggers = []trigger{{Type: "prometheus", MetricType: "Value", Metadata: triggerMetadata{
		ServerAddress: k.PrometheusURL, Query: tr.Query,
		Threshold:        strconv.FormatFloat(tr.Threshold, 'g', 4, 64),
		IgnoreNullValues: "false",
	}}}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(so); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	head := fmt.Sprintf("# KEDA ScaledObject: scale %s past the load of concurrency %d, the most that met every objective\n"+
		"# (TPOT p95 %s, ttftop sweep of %s, client-measured).\n# Reads %s.\n",
		k.Target, r.Knee.Concurrency, msText(r.Knee.TPOTp95ms), r.Endpoint, tr.Reads)
	if k.Assumes != "" {
		head += "# Its series are selected by " + strings.Join(k.Matchers, ", ") + ": " + k.Assumes + ".\n"
	}
	if tr.Warning != "" {
		head += "# WARNING: " + tr.Warning + ".\n"
	}
	return head + b.String(), nil
}

// dnsLabel turns a model name into a Kubernetes name (RFC 1123 label).
func dnsLabel(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 50 {
		out = strings.Trim(out[:50], "-")
	}
	if out == "" {
		out = "model"
	}
	return out
}

type scaledObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace,omitempty"`
	} `yaml:"metadata"`
	Spec struct {
		ScaleTargetRef struct {
			Name string `yaml:"name"`
		} `yaml:"scaleTargetRef"`
		MinReplicaCount int `yaml:"minReplicaCount"`
		MaxReplicaCount int `yaml:"maxReplicaCount"`
		Fallback        struct {
			FailureThreshold int `yaml:"failureThreshold"`
			Replicas         int `yaml:"replicas"`
		} `yaml:"fallback"`
		Triggers []trigger `yaml:"triggers"`
	} `yaml:"spec"`
}

type trigger struct {
	Type       string          `yaml:"type"`
	MetricType string          `yaml:"metricType"`
	Metadata   triggerMetadata `yaml:"metadata"`
}

type triggerMetadata struct {
	ServerAddress    string `yaml:"serverAddress"`
	Query            string `yaml:"query"`
	Threshold        string `yaml:"threshold"`
	IgnoreNullValues string `yaml:"ignoreNullValues"`
}
