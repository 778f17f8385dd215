package sshserve

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestShutdownEndsSessionsWithoutLeaks: viewers are told the server is
// going away, and every goroutine the server started is gone afterwards.
func TestShutdownEndsSessionsWithoutLeaks(t *testing.T) {
	base := runtime.NumGoroutine()
	f := startServer(t, nil)
	a, b := f.openViewer(nil), f.openViewer(nil)
	a.waitText("llama-test")
	b.waitText("llama-test")
	if runtime.NumGoroutine() <= base+10 {
		t.Fatalf("set-up: only %d goroutines more with two viewers", runtime.NumGoroutine()-base)
	}
	if err := f.stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	for _, v := range []*viewerConn{a, b} {
		v.waitEnd()
		if !strings.Contains(v.errOut.String(), "shutting down") {
			t.Errorf("viewer not told of the shutdown: %q", v.errOut.String())
		}
		v.close()
	}
	// A couple of runtime/test goroutines may come and go; a leaked
	// session costs a dozen (program, renderer, input, channel, conn).
	const tolerance = 2
	deadline := time.Now().Add(waitLong)
	for runtime.NumGoroutine() > base+tolerance {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before, %d after shutdown:\n%s", base, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
