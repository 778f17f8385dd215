package monitor

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/telemetry"
)

// restartDelay is how long a source that panicked waits before it runs
// again: long enough not to spin on a bug hit every round, short enough
// that an on-call screen gets its figures back.
const restartDelay = 10 * time.Second

// guarded runs a source loop so that a bug in it (a panic) cannot end the
// process: a panic in a source's goroutine would kill every view with it
// and leave the terminal raw. The panic is reported as an error status
// named name, with where it happened; after restartDelay the loop runs
// again and that status is withdrawn, the source's own taking over. A
// normal return is returned as is. Goroutines a source starts itself are
// not covered: only its loop's.
func (m *Monitor) guarded(ctx context.Context, name string, run func(context.Context) error) error {
	for panics := 1; ; panics++ {
		p, err := runRecovering(ctx, run)
		if p == "" {
			return err
		}
		m.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: time.Now(), Source: name,
			Status: &telemetry.SourceStatus{Name: name, Kind: "source", State: telemetry.Error, Failures: panics,
				Err: fmt.Sprintf("internal error (a ttftop bug; please report it): %s; restarting in %s", p, restartDelay)}})
		t := time.NewTimer(restartDelay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		// Running again: its own status speaks from here on.
		m.Observe(telemetry.Observation{Kind: telemetry.KindRetire, At: time.Now(), Source: name})
	}
}

// runRecovering calls run; a panic is returned as its value and the
// function it happened in ("" when run returned).
func runRecovering(ctx context.Context, run func(context.Context) error) (panicked string, err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		panicked = sanitize.Text(fmt.Sprint(r))
		if at := panicSite(); at != "" {
			panicked += " in " + at
		}
	}()
	return "", run(ctx)
}

// panicSite is the function and line where the panic being recovered
// happened: the first frame of the panicking stack outside the runtime.
// Called from the deferred function.
func panicSite() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "runtime.") && f.Function != "" {
			file := f.File
			if i := strings.LastIndex(file, "/"); i >= 0 {
				file = file[i+1:]
			}
			return fmt.Sprintf("%s (%s:%d)", f.Function, file, f.Line)
		}
		if !more {
			return ""
		}
	}
}
