package kube

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is a connection to an API server.
type Cluster struct {
	config *rest.Config
	client kubernetes.Interface
	// Namespace is where pods are looked for; "" with AllNamespaces.
	Namespace string
	// InCluster: running in a pod with its service account, pods are
	// reached at their IPs rather than through the API server.
	InCluster bool
	// Context names the kubeconfig context (or "in-cluster").
	Context string
}

// Connect opens the cluster s names: its kubeconfig (or, inside a pod
// with no kubeconfig given, the pod's service account).
func Connect(s Settings) (*Cluster, error) {
	if s.Kubeconfig == "" && os.Getenv("KUBECONFIG") == "" && os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("kube: in-cluster config: %w", err)
		}
		ns := s.Namespace
		if ns == "" {
			b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
			if err != nil {
				return nil, fmt.Errorf("kube: the pod's namespace: %w", err)
			}
			ns = string(b)
		}
		return newCluster(cfg, s, ns, true, "in-cluster")
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = s.Kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: s.Context})
	cfg, err := loader.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, errors.New("kube: no kubeconfig (set KUBECONFIG or --kubeconfig)")
		}
		return nil, fmt.Errorf("kube: %w", err)
	}
	ns, _, err := loader.Namespace()
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	if s.Namespace != "" {
		ns = s.Namespace
	}
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	name := s.Context
	if name == "" {
		name = raw.CurrentContext
	}
	return newCluster(cfg, s, ns, false, name)
}

func newCluster(cfg *rest.Config, s Settings, ns string, inCluster bool, context string) (*Cluster, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "ttftop"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	if s.AllNamespaces {
		ns = ""
	}
	return &Cluster{config: cfg, client: client, Namespace: ns, InCluster: inCluster, Context: context}, nil
}

// Host is the API server's URL.
func (c *Cluster) Host() string { return c.config.Host }

// Where says which namespaces are looked at, for messages.
func (c *Cluster) Where() string {
	if c.Namespace == "" {
		return "all namespaces of " + c.Context
	}
	return "namespace " + c.Namespace + " of " + c.Context
}
