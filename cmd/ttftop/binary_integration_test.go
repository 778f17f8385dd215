//go:build integration

package main

import (
	"os"
	"sync"
	"testing"

	"github.com/ttftop/ttftop/internal/testbin"
)

// TestMain removes the binary the end-to-end tests built once they are
// done.
func TestMain(m *testing.M) {
	os.Exit(testbin.Remove(m.Run(), testbin.Dir(binaryPrefix)))
}

const binaryPrefix = "ttftop-e2e"

// builtTtftop builds the binary once per test process (a link takes
// seconds on a loaded machine; a dozen tests run it); every test shares
// the result or the error.
var builtTtftop = sync.OnceValues(func() (string, error) { return testbin.Build(testbin.Dir(binaryPrefix)) })

// buildTtftop is the binary, built once per test process.
func buildTtftop(t *testing.T) string {
	t.Helper()
	bin, err := builtTtftop()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
