package sweep

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tokentop/tokentop/engines"
	"github.com/tokentop/tokentop/telemetry"
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
}

// Snippet is a KEDA ScaledObject with a prometheus trigger on the
// engine's TPOT metric (the engines table's first TPOT alias), threshold
// at the knee's TPOT p95. The trigger uses metricType Value: KEDA then
// scales to ceil(replicas × TPOT / threshold), adding replicas as TPOT
// climbs past what the knee sustained — the right reading for a latency,
// which does not divide across replicas as a queue length would.
func Snippet(k KEDA, r *Report) (string, error) {
	if r.Knee == nil || r.Knee.TPOTp95ms == nil {
		return "", errors.New("no knee with a TPOT p95: nothing to set the threshold at")
	}
	engine := r.Engine
	if engine == "" || engine == telemetry.EngineUnknown {
		engine = telemetry.EngineVLLM
	}
	spec, ok := engines.Lookup(engine)
	if !ok || len(spec.Signals[telemetry.TPOT]) == 0 {
		return "", fmt.Errorf("engine %s has no TPOT metric in the engines table", engine)
	}
	query := tpotQuery(spec, spec.Signals[telemetry.TPOT][0], r.Model, k.Window)
	name := k.Name
	if name == "" {
		name = "tpot-" + dnsLabel(r.Model)
	}
	so := scaledObject{APIVersion: "keda.sh/v1alpha1", Kind: "ScaledObject"}
	so.Metadata.Name, so.Metadata.Namespace = name, k.Namespace
	so.Spec.ScaleTargetRef.Name = k.Target
	so.Spec.MinReplicaCount, so.Spec.MaxReplicaCount = k.MinReplicas, k.MaxReplicas
	// Without traffic the quantile is NaN or empty; KEDA's default turns
	// that into 0 and scales in during the outage that should scale out.
	// As errors (ignoreNullValues "false") they reach the fallback.
	so.Spec.Fallback.FailureThreshold = 3
	so.Spec.Fallback.Replicas = max(k.MinReplicas, (k.MaxReplicas+1)/2)
	so.Spec.Triggers = []trigger{{Type: "prometheus", MetricType: "Value", Metadata: triggerMetadata{
		ServerAddress: k.PrometheusURL, Query: query,
		Threshold:        strconv.FormatFloat(*r.Knee.TPOTp95ms/1000, 'g', 4, 64),
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
	head := fmt.Sprintf("# KEDA ScaledObject: scale %s when TPOT p95 passes %.1f ms, what concurrency %d sustained\n"+
		"# while meeting every objective (tokentop sweep of %s, client-measured).\n",
		k.Target, *r.Knee.TPOTp95ms, r.Knee.Concurrency, r.Endpoint)
	return head + b.String(), nil
}

// tpotQuery is the PromQL of the p95 TPOT of one model.
func tpotQuery(spec engines.Spec, a engines.Alias, model, window string) string {
	sel := ""
	if l := spec.ModelLabel(); l != "" && model != "" {
		sel = "{" + l + "=" + strconv.Quote(model) + "}"
	}
	var q string
	switch a.Type {
	case engines.Histogram:
		// The outer max() keeps the result to one element whatever labels
		// a relabelling adds: KEDA refuses a vector of more.
		q = fmt.Sprintf("max(histogram_quantile(0.95, sum by (le) (rate(%s%s[%s]))))", a.Bucket(), sel, window)
	case engines.CounterRatio:
		q = fmt.Sprintf("sum(rate(%s%s[%s])) / sum(rate(%s%s[%s]))", a.Name, sel, window, a.Per, sel, window)
	default:
		q = fmt.Sprintf("max(%s%s)", a.Name, sel)
	}
	if f := a.Factor(); f != 1 {
		q = "(" + q + ") * " + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return q
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
