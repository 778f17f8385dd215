package report

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// Reader is what the headless loop reads; *telemetry.Store fits.
type Reader interface {
	Snapshot(now time.Time, window time.Duration) telemetry.Snapshot
}

// Loop prints a summary every interval until ctx is done: a text table, or
// one JSON document per line when asJSON is set (for log pipelines). It is
// what the dashboard does when stdout is not a terminal.
func Loop(ctx context.Context, w io.Writer, r Reader, every, window time.Duration, asJSON bool) error {
	return LoopWithAlerts(ctx, w, r, nil, every, window, asJSON)
}

// LoopWithAlerts is Loop with the SLO state in every summary: each
// objective's state and value, and the alert episodes (alerts nil: none).
func LoopWithAlerts(ctx context.Context, w io.Writer, r Reader, alerts AlertReader, every, window time.Duration, asJSON bool) error {
	return LoopWithDiagnosis(ctx, w, r, alerts, nil, every, window, asJSON)
}

// LoopWithDiagnosis is LoopWithAlerts with each endpoint's diagnosis in
// the JSON lines (diag nil: none).
func LoopWithDiagnosis(ctx context.Context, w io.Writer, r Reader, alerts AlertReader, diag DiagnosisReader, every, window time.Duration, asJSON bool) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			doc := Build(r.Snapshot(now, window), alerts)
			if diag != nil {
				doc.Diagnosis = diag.Latest()
			}
			var err error
			if asJSON {
				err = json.NewEncoder(w).Encode(doc)
			} else {
				if err = WriteText(w, doc); err == nil {
					_, err = fmt.Fprintln(w)
				}
			}
			if err != nil {
				return err
			}
		}
	}
}
