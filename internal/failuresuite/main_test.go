//go:build integration

package failuresuite

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ttftop/ttftop/internal/testbin"
)

// defaultParallel is how many scenarios run at once unless -parallel is
// given: they spend their time waiting for wall-clock behaviour (an alert's
// "for", a store's lag), not computing, so GOMAXPROCS (the default, 2 on a
// two-core machine) would only make the suite several minutes longer.
const defaultParallel = "8"

// TestMain raises -parallel (unless given), and removes the binary the
// scenarios built once they are done.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", defaultParallel); err != nil {
			fmt.Fprintf(os.Stderr, "failuresuite: -parallel %s: %v\n", defaultParallel, err)
			os.Exit(2)
		}
	}
	os.Exit(testbin.Remove(m.Run(), testbin.Dir(buildPrefix)))
}

// buildPrefix names the directory the binary is built in, one per test
// process (testbin.Dir).
const buildPrefix = "ttftop-failuresuite"

// binaryEnv, when set, names a ttftop binary to test instead of
// building ./cmd/ttftop (a release build, another branch's).
const binaryEnv = "FAILURESUITE_TTFTOP"

// builtBinary builds ./cmd/ttftop once per test process; every scenario
// shares the result (or the error).
var builtBinary = sync.OnceValues(func() (string, error) {
	if p := os.Getenv(binaryEnv); p != "" {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s=%s is not an executable file", binaryEnv, p)
		}
		return p, nil
	}
	return testbin.Build(testbin.Dir(buildPrefix))
})

// ttftopBinary is the built binary, or the test fails (a build error is
// a failure, never a skip). In -short mode the whole suite is skipped, and
// says so.
func ttftopBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("failure suite: skipped in -short mode (it runs the built binary against real servers for minutes)")
	}
	bin, err := builtBinary()
	if err != nil {
		t.Fatalf("building ttftop: %v", err)
	}
	return bin
}

// requireBinary returns the path of an external program the scenario
// needs, or skips the test naming it and how to install it.
func requireBinary(t *testing.T, hint string, candidates ...string) string {
	t.Helper()
	for _, c := range candidates {
		if filepath.IsAbs(c) {
			if fi, err := os.Stat(c); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
				return c
			}
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		} else if !errors.Is(err, exec.ErrNotFound) {
			t.Logf("looking up %s: %v", c, err)
		}
	}
	t.Skipf("failure suite: %s not found (looked for %v): %s", candidates[0], candidates, hint)
	return ""
}
