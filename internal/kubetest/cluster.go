package kubetest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Admin is the user with every right (group system:masters).
const Admin = "admin"

// Cluster is a running etcd and kube-apiserver.
type Cluster struct {
	// Host is the API server's URL, https://127.0.0.1:<port>.
	Host string
	// Client is the admin's clientset.
	Client kubernetes.Interface
	caPEM  []byte
	dir    string
	api    *process
}

// Start starts etcd and kube-apiserver on loopback ports and waits until
// the API server is ready. users are extra token users with no rights
// but those of system:authenticated; tests grant them what they need
// with RBAC (Grant). Both stop when the test ends.
func Start(t testing.TB, users ...string) *Cluster {
	t.Helper()
	etcdBin, apiBin := binaries(t)
	dir := t.TempDir()
	keys, err := newPKI(dir)
	if err != nil {
		t.Fatalf("kubetest: keys: %v", err)
	}
	tokens := []string{fmt.Sprintf("%s,%s,%s,system:masters", token(Admin), Admin, Admin)}
	for _, u := range users {
		tokens = append(tokens, fmt.Sprintf("%s,%s,%s", token(u), u, u))
	}
	tokenFile := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(strings.Join(tokens, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	client, peer := fmt.Sprintf("http://127.0.0.1:%d", ports[0]), fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	etcd := startProcess(t, "etcd", exec.Command(etcdBin, "--name=kubetest", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+client, "--advertise-client-urls="+client,
		"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer,
		"--initial-cluster=kubetest="+peer, "--log-level=error"))
	api := startProcess(t, "kube-apiserver", exec.Command(apiBin,
		"--etcd-servers="+client,
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", ports[2]),
		// It refuses a loopback advertise address for the kubernetes
		// Service's endpoints; there is no Service to reconcile here.
		"--advertise-address=127.0.0.1", "--endpoint-reconciler-type=none",
		"--tls-cert-file="+keys.servingCert, "--tls-private-key-file="+keys.servingKey,
		"--token-auth-file="+tokenFile, "--authorization-mode=RBAC",
		"--service-account-key-file="+keys.saPub, "--service-account-signing-key-file="+keys.saKey,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range=10.96.0.0/24",
		"--cert-dir="+filepath.Join(dir, "certs"),
		"--v=0"))
	c := &Cluster{Host: fmt.Sprintf("https://127.0.0.1:%d", ports[2]), caPEM: keys.caPEM, dir: dir, api: api}
	cs, err := kubernetes.NewForConfig(c.Config(Admin))
	if err != nil {
		t.Fatal(err)
	}
	c.Client = cs
	if err := c.waitReady(etcd, api, 3*time.Minute); err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	return c
}

// APIServerLog is what kube-apiserver wrote so far (stdout and stderr).
func (c *Cluster) APIServerLog() string { return c.api.log.String() }

// token is a user's bearer token in the token file.
func token(user string) string { return user + "-token" }

// Config is a rest.Config for user, trusting the cluster's CA.
func (c *Cluster) Config(user string) *rest.Config {
	return &rest.Config{Host: c.Host, BearerToken: token(user), TLSClientConfig: rest.TLSClientConfig{CAData: c.caPEM},
		QPS: 100, Burst: 200}
}

// Kubeconfig writes a kubeconfig file whose current context, named
// context, is user's on this cluster with namespace ns; it returns its
// path.
func (c *Cluster) Kubeconfig(t testing.TB, user, context, ns string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubetest"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token(user)}
	cfg.Contexts[context] = &clientcmdapi.Context{Cluster: "kubetest", AuthInfo: user, Namespace: ns}
	cfg.CurrentContext = context
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitReady polls /readyz until it answers ok, a process exits or the
// deadline passes.
func (c *Cluster) waitReady(etcd, api *process, within time.Duration) error {
	deadline := time.Now().Add(within)
	var last error
	for time.Now().Before(deadline) {
		for _, p := range []*process{etcd, api} {
			if err := p.failed(); err != nil {
				return err
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		body, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		cancel()
		if err == nil && string(body) == "ok" {
			return nil
		}
		last = fmt.Errorf("%v %s", err, body)
		time.Sleep(100 * time.Millisecond) // polling interval, not synchronisation
	}
	return fmt.Errorf("kube-apiserver not ready within %s: %v\n%s", within, last, api.log.String())
}
