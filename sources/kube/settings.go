package kube

// Settings are the kube: section of the config file and the --kube flags.
type Settings struct {
	// Enabled turns discovery on (--kube).
	Enabled bool `yaml:"enabled"`
	// Kubeconfig is the file (default $KUBECONFIG, else ~/.kube/config;
	// in a pod without either, the pod's service account).
	Kubeconfig string `yaml:"kubeconfig"`
	// Context is the kubeconfig context (default its current one).
	Context string `yaml:"context"`
	// Namespace is where pods are looked for (default the context's);
	// AllNamespaces looks everywhere.
	Namespace     string `yaml:"namespace"`
	AllNamespaces bool   `yaml:"all_namespaces"`
	// Selector is a label selector narrowing the pods looked at.
	Selector string `yaml:"selector"`
}
