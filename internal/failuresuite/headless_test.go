//go:build integration

package failuresuite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// received is one JSON line of a headless dashboard, parsed, with when the
// test read it.
type received struct {
	got time.Time
	doc snapshotDoc
}

// headless is `ttftop ... --json` with stdout a pipe: one snapshot per
// refresh, parsed as the lines come.
type headless struct {
	*process
	mu   sync.Mutex
	docs []received
	bad  []string // stdout lines that are not a JSON document
}

// startHeadless runs the dashboard headless with args (URLs and flags;
// --json is added). HOME and XDG_CONFIG_HOME point at an empty directory
// so no user config is read.
func startHeadless(t *testing.T, name string, args ...string) *headless {
	t.Helper()
	bin := ttftopBinary(t)
	h := &headless{}
	opts := procOptions{env: isolatedEnv(t), onLine: h.add}
	h.process = startProcess(t, name, opts, bin, append(args, "--json")...)
	return h
}

// isolatedEnv keeps a ttftop away from the user's configuration.
func isolatedEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "NO_COLOR=1"}
}

func (h *headless) add(ln line) {
	var d snapshotDoc
	err := json.Unmarshal([]byte(ln.text), &d)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.bad = append(h.bad, fmt.Sprintf("%v: %.300s", err, ln.text))
		return
	}
	h.docs = append(h.docs, received{got: ln.at, doc: d})
}

// all returns every document read so far.
func (h *headless) all() []received {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]received(nil), h.docs...)
}

// between returns the documents read in [from, to].
func (h *headless) between(from, to time.Time) []received {
	var out []received
	for _, r := range h.all() {
		if !r.got.Before(from) && !r.got.After(to) {
			out = append(out, r)
		}
	}
	return out
}

// unparsed is what stdout held that was not a JSON document.
func (h *headless) unparsed() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.bad...)
}

// waitDoc waits up to limit for a document read at or after from that
// pred accepts; ok is false on timeout or when the process ended.
func (h *headless) waitDoc(from time.Time, limit time.Duration, pred func(snapshotDoc) bool) (received, bool) {
	var found received
	next := 0
	_, ok := eventually(limit, 200*time.Millisecond, func() bool {
		docs := h.all()
		for ; next < len(docs); next++ {
			if !docs[next].got.Before(from) && pred(docs[next].doc) {
				found = docs[next]
				return true
			}
		}
		return h.hasExited()
	})
	return found, ok && !found.got.IsZero()
}

// mustWaitDoc is waitDoc that fails the test, showing the last document.
func (h *headless) mustWaitDoc(t *testing.T, from time.Time, limit time.Duration, what string, pred func(snapshotDoc) bool) received {
	t.Helper()
	r, ok := h.waitDoc(from, limit, pred)
	if !ok {
		t.Fatalf("%s: %s never showed %s within %s; last document:\n%s", t.Name(), h.name, what, limit, h.lastDocText())
	}
	return r
}

// lastDocText is the last line the dashboard printed, for failure
// messages.
func (h *headless) lastDocText() string {
	if bad := h.unparsed(); len(bad) > 0 {
		return h.stdout.Tail(1, 8000) + "\n(unparsed stdout lines: " + strings.Join(bad, " | ") + ")"
	}
	return h.stdout.Tail(1, 8000)
}

// writeFile writes a file the scenario needs (config, scrape config).
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
