package probe

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/fixtures"
	"github.com/ttftop/ttftop/internal/probetest"
	"github.com/ttftop/ttftop/telemetry/telemetrytest"
)

// fixtureDir is the repository's stream captures.
func fixtureDir(t *testing.T) string {
	t.Helper()
	return fixtures.Dir(t, "streams")
}

// probeOnce runs one request against url with opts (model "m").
func probeOnce(t *testing.T, opts Options) *Result {
	t.Helper()
	if opts.Model == "" {
		opts.Model = "m"
	}
	p, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.Do(ctx, nil)
}

// The scripted servers and chat chunks are internal/probetest's, shared
// with the command's tests.
type step = probetest.Step

var (
	scripted       = probetest.Scripted
	server         = probetest.Server
	sseData        = probetest.SSEData
	chatChunk      = probetest.ChatChunk
	reasoningChunk = probetest.ReasoningChunk
	quote          = probetest.Quote
	usageChunk     = probetest.UsageChunk
)

const (
	roleChunk   = probetest.RoleChunk
	finishChunk = probetest.FinishChunk
)

// flush sends what the handler wrote so far.
func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// collector keeps every observation (a concurrency-safe Sink).
type collector = telemetrytest.Collector

// slack is the upper timing margin: on a loaded shared machine delays
// only ever add, and load averages of 10 on 2 cores have been seen.
const slack = 600 * time.Millisecond

// near checks d is within [want−below, want+above]: timing on a noisy
// shared machine only ever runs late, so the upper margin is the wide one.
func near(t *testing.T, what string, d, want, below, above time.Duration) {
	t.Helper()
	if d < want-below || d > want+above {
		t.Errorf("%s = %v, want %v (−%v/+%v)", what, d, want, below, above)
	}
}
