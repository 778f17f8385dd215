package discover

import (
	"context"
	"github.com/ttftop/ttftop/internal/discover/enginetest"
	"strings"
	"testing"
)

// TestLocalNothingFound: a machine with no engine process and nothing on
// the ports (an empty /proc) finds nothing and says what it looked at.
func TestLocalNothingFound(t *testing.T) {
	r, err := Local(context.Background(), Options{ProcRoot: t.TempDir(), Ports: []int{enginetest.FreePort(t)}, DCGMPort: -1, LookPath: noNvidiaSMI})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Endpoints) != 0 || r.DCGM != "" || r.NvidiaSMI {
		t.Errorf("found %+v on an empty machine", r)
	}
	if !strings.Contains(r.Looked, "0 listening sockets") || !strings.Contains(r.Looked, "ports") {
		t.Errorf("Looked = %q: want what was looked at", r.Looked)
	}
}
