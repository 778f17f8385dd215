package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/internal/sweep"
	"github.com/ttftop/ttftop/sources/gpu"
	"github.com/ttftop/ttftop/sources/kube"
	"github.com/ttftop/ttftop/sources/probe"
)

// kubeFlags control --kube: model pods found through a Kubernetes API
// server and reached through its pod proxy (sources/kube).
type kubeFlags struct {
	set     kube.Settings
	result  *kube.Result // what was found, to say on stderr
	cluster *kube.Cluster
	watched kube.Settings // what addPods found from, for the watch
	// endpoint is how a found pod is measured, for the pods arriving later.
	endpoint monitor.PodEndpoint
}

func (k *kubeFlags) bind(fs *pflag.FlagSet) {
	fs.BoolVar(&k.set.Enabled, "kube", false, "find model pods through the Kubernetes API server and reach them through its pod proxy (docs/kubernetes.md)")
	fs.StringVar(&k.set.Kubeconfig, "kubeconfig", "", "--kube: kubeconfig `FILE` (default $KUBECONFIG, else ~/.kube/config)")
	fs.StringVar(&k.set.Context, "context", "", "--kube: kubeconfig `CONTEXT` (default its current one)")
	fs.StringVar(&k.set.Namespace, "namespace", "", "--kube: `NAMESPACE` to look in (default the context's)")
	// kubectl's short names; not -n, which probe and check already use
	// for their request count (one flag, one meaning in every command).
	fs.BoolVarP(&k.set.AllNamespaces, "all-namespaces", "A", false, "--kube: look in every namespace")
	fs.StringVarP(&k.set.Selector, "selector", "l", "", "--kube: label `SELECTOR` narrowing the pods (as kubectl's -l)")
}

// settings are the config file's kube section overridden by the flags.
func (k *kubeFlags) settings(file kube.Settings) kube.Settings {
	s := file
	s.Enabled = s.Enabled || k.set.Enabled
	s.Kubeconfig = cmp.Or(k.set.Kubeconfig, s.Kubeconfig)
	s.Context = cmp.Or(k.set.Context, s.Context)
	s.Namespace = cmp.Or(k.set.Namespace, s.Namespace)
	s.AllNamespaces = s.AllNamespaces || k.set.AllNamespaces
	s.Selector = cmp.Or(k.set.Selector, s.Selector)
	return s
}

// kubeSetup bounds connecting and listing the cluster's pods.
const kubeSetup = 30 * time.Second

// addPods finds the model pods of the cluster s names and adds them to c,
// each reached through the API server's pod proxy (in-cluster, at its
// IP), with the node's dcgm-exporter for its GPUs.
func (k *kubeFlags) addPods(c *config.Config, s kube.Settings, p probe.Settings, model, api string, noScrape bool) error {
	cl, err := kube.Connect(s)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), kubeSetup)
	defer cancel()
	r, err := cl.Discover(ctx, s.Selector)
	if err != nil {
		return err
	}
	k.cluster, k.result, k.watched = cl, &r, s
	k.endpoint = podEndpoint(cl, p, model, api, noScrape)
	for _, pod := range r.Pods {
		c.Endpoints = append(c.Endpoints, k.endpoint(pod))
	}
	for _, e := range r.Exporters {
		// Named by its pod and node: every exporter has the API server's
		// host in its URL.
		d := gpu.Settings{URL: cl.URL(e.Namespace, e.Name, "", e.Port), Transport: cl.Transport(), Node: e.Node,
			Via: fmt.Sprintf("kube %s/%s (node %s) through", e.Namespace, e.Name, e.Node)}
		c.DCGM = append(c.DCGM, d)
	}
	return nil
}

// podEndpoint is how a pod of cl is measured: probed and scraped
// through the API server's pod proxy (in-cluster, at its IP), with p's
// probe settings.
func podEndpoint(cl *kube.Cluster, p probe.Settings, model, api string, noScrape bool) monitor.PodEndpoint {
	via := "kube " + cl.Context + " pod proxy"
	if cl.InCluster {
		via = ""
	}
	reach := config.Reach{Transport: cl.Transport()}
	return func(pod kube.Pod) config.Endpoint {
		ep := config.Endpoint{Name: pod.Key(), Model: model, API: api, Found: "kube " + pod.Convention, Via: via, Reach: reach}
		ep.Node = pod.Node
		ep.Tags = pod.Labels()
		pp := p
		ep.Probe = &pp
		metrics := cl.URL(pod.Namespace, pod.Name, pod.IP, pod.Metrics.Number)
		ep.URL, ep.Metrics = cl.URL(pod.Namespace, pod.Name, pod.IP, pod.API.Number), metrics+pod.Metrics.Path
		if pod.ScrapeOnly {
			ep.URL, pp.Disabled = metrics, true
		}
		if noScrape {
			ep.Metrics = "off"
		}
		return ep
	}
}

// addWatch follows the pods found (a rollout, a pod lost, one not
// ready, one arriving) on m's dashboard; a pod arriving is probed with
// c's completed probe settings, as those found at start were.
func (k *kubeFlags) addWatch(m *monitor.Monitor, c *config.Config) {
	if k.cluster == nil {
		return
	}
	endpoint := func(pod kube.Pod) config.Endpoint {
		ep := k.endpoint(pod)
		ep.Probe.Fill(c.Probe)
		return ep
	}
	m.AddPodWatch("kube:"+k.cluster.Context, k.result.Pods, func(ctx context.Context, report func(kube.Change)) error {
		return k.cluster.Watch(ctx, k.watched.Selector, report)
	}, endpoint)
}

// report says on w what was found in the cluster.
func (k *kubeFlags) report(w io.Writer) {
	if k.result == nil {
		return
	}
	for _, line := range k.result.Describe() {
		fmt.Fprintf(w, "ttftop: kube: %s\n", line)
	}
	if len(k.result.Pods) == 0 {
		fmt.Fprintf(w, "ttftop: kube: no model pod found in %s\n", k.cluster.Where())
	}
}

// kedaFromPod points sweep's ScaledObject at the Deployment that owns
// the pod found with --kube, in its namespace, unless --keda-target and
// --keda-namespace said otherwise, and narrows its query to that
// Deployment's pods by the labels the cluster's Prometheus gives them.
func kedaFromPod(k *sweep.KEDA, labels map[string]string, given map[string]bool) {
	name, ok := strings.CutPrefix(labels[kube.LabelOwner], "Deployment ")
	if !ok {
		return
	}
	if !given["keda-target"] {
		k.Target = name
	}
	if !given["keda-namespace"] {
		k.Namespace = labels[kube.LabelNamespace]
	}
	k.Matchers = sweep.PodMatchers(k.Namespace, k.Target)
	k.Assumes = "the target labels prometheus-operator's PodMonitor and ServiceMonitor (kube-prometheus) give its pods; other relabelling needs --keda-* and an edited query"
}
