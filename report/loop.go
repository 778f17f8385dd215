package report

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/tokentop/tokentop/telemetry"
)

// Reader is what the headless loop reads; *telemetry.Store fits.
type Reader interface {
	Snapshot(now time.Time, window time.Duration) telemetry.Snapshot
}

// Loop prints a summary every interval until ctx is done: a text table, or
// one JSON document per line when asJSON is set (for log pipelines). It is
// what the dashboard does when stdout is not a terminal.
func Loop(ctx context.Context, w io.Writer, r Reader, every, window time.Duration, asJSON bool) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			snap := r.Snapshot(now, window)
			var err error
			if asJSON {
				err = json.NewEncoder(w).Encode(snap)
			} else {
				if err = Text(w, snap); err == nil {
					_, err = fmt.Fprintln(w)
				}
			}
			if err != nil {
				return err
			}
		}
	}
}
