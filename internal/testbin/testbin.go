// Package testbin builds the ttftop binary for end-to-end tests: once per
// test process, into a directory of that process's own, removed when its
// tests are done.
package testbin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// buildTimeout bounds the one `go build`; a cold build on a loaded
// two-core machine takes a few minutes.
const buildTimeout = 6 * time.Minute

// Dir is where a test process builds: one directory per process (named
// by prefix and pid), so parallel `go test` runs never share a
// half-written binary.
func Dir(prefix string) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("%s-%d", prefix, os.Getpid()))
}

// Build builds github.com/ttftop/ttftop/cmd/ttftop into dir and returns
// the binary's path.
func Build(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go tool is not on PATH: %w", err)
	}
	bin := filepath.Join(dir, "ttftop")
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, "github.com/ttftop/ttftop/cmd/ttftop").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/ttftop: %w\n%s", err, out)
	}
	return bin, nil
}

// Remove deletes dir once the tests are done and returns the exit code
// for TestMain: code, or 1 when the tests passed but dir could not be
// removed.
func Remove(code int, dir string) int {
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintf(os.Stderr, "removing %s: %v\n", dir, err)
		if code == 0 {
			return 1
		}
	}
	return code
}
