package kubetest

import (
	"os"
	"path/filepath"
	"testing"
)

// Version is the Kubernetes release the binaries are built from (module
// apiserver); the client libraries of the main module are its v0 twin.
const Version = "v1.37.2"

// BinDir is where build.sh puts kube-apiserver and etcd:
// $TTFTOP_KUBE_BIN, else ~/.cache/ttftop/kube-<Version>.
func BinDir() string {
	if d := os.Getenv("TTFTOP_KUBE_BIN"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "ttftop", "kube-"+Version)
}

// binaries returns the paths of etcd and kube-apiserver. Absent, the
// test is skipped with how to build them, unless TTFTOP_KUBE_REQUIRED is
// set (CI), where it fails.
func binaries(t testing.TB) (etcd, apiserver string) {
	t.Helper()
	dir := BinDir()
	etcd, apiserver = filepath.Join(dir, "etcd"), filepath.Join(dir, "kube-apiserver")
	for _, p := range []string{etcd, apiserver} {
		if _, err := os.Stat(p); err != nil {
			msg := "kube-apiserver and etcd not built (" + err.Error() + "): run internal/kubetest/build.sh (about 10 min on 2 cores)"
			if os.Getenv("TTFTOP_KUBE_REQUIRED") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return etcd, apiserver
}
