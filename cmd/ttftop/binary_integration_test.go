//go:build integration

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestMain removes the binary the end-to-end tests built once they are
// done.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := os.RemoveAll(binaryDir()); err != nil {
		fmt.Fprintf(os.Stderr, "removing %s: %v\n", binaryDir(), err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// binaryDir is where the binary is built: one directory per test
// process, so parallel `go test` runs never share a half-written binary.
func binaryDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("ttftop-e2e-%d", os.Getpid()))
}

// builtTtftop builds the binary once per test process (a link takes
// seconds on a loaded machine; a dozen tests run it); every test shares
// the result or the error.
var builtTtftop = sync.OnceValues(func() (string, error) {
	if err := os.MkdirAll(binaryDir(), 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(binaryDir(), "ttftop")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build: %w\n%s", err, out)
	}
	return bin, nil
})

// buildTtftop is the binary, built once per test process.
func buildTtftop(t *testing.T) string {
	t.Helper()
	bin, err := builtTtftop()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
