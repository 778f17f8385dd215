package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/internal/report"
	"github.com/ttftop/ttftop/telemetry"
)

func snapshotCommand() command {
	return command{name: "snapshot", summary: "run the sources for a while and print one read-out (tables, or --json)", usage: snapshotUsage, bind: runSnapshot}
}

const snapshotUsage = `ttftop snapshot [URL...] [--scrape URL] [--prometheus URL] [--dcgm URL] [--config FILE] [flags]

Runs the configured sources for --duration, judges the objectives, then
prints one read-out: tables, or with --json one JSON document:
{"endpoints": [...], "sources": [...], "window_ms", "slo": {"objectives":
[...], "alerts": [...]}}. Each endpoint has name, model, engine and signals
(ttft, tpot, itl, e2e, output_tps, running, waiting, kv_cache, gpu_mem_bw,
mbu, error_rate; absent when not known), each with unit, p50/p90/p95/p99
or value, source, state and observed_at; a histogram quantile that is only
a bucket's edge has p50_bound… ("upper": at most, "lower": at least) and
the window's mean; rates carry rate_window_s. Each endpoint's diagnosis
says why it is slow or failing: causes (none, unclear, queueing, prefill,
kv_cache, bandwidth, batching, gpu_slowdown, network, prefix_cache,
spec_decode, replica, errors, down), each with its evidence against its
baseline, since and next step, and the latency's decomposition
(docs/diagnosis.md). Each objective (one per objective
and endpoint) has its state (inactive, pending, firing, no_data, unknown,
unmeasurable: the endpoint's engine never exposes the signal, reason says why),
value (value_ms for a latency; null until measured), threshold
(threshold_ms) and data state; alerts are the episodes that fired.

--webhook and --on-alert are notified of alerts that fire or resolve
during the run; notifications still queued at the end get 5 s. Delivery
failures are said on stderr as they happen, and any notification never
delivered makes the exit status 1, as does a read-out that no source could
measure (none reported within --duration, or every one failed); the
read-out is printed all the same.`

func runSnapshot(fs *pflag.FlagSet) runFunc {
	var sf sourceFlags
	sf.bind(fs)
	var duration, window time.Duration
	durationVar(fs, &duration, "duration", 15*time.Second, "how long to collect before printing")
	bindWindow(fs, &window)
	text := fs.Bool("text", false, "plain-text tables (the default; kept for scripts that pass it)")
	jsonOut := fs.Bool("json", false, jsonUsage)
	return func(ctx context.Context, urls []string, stdout, stderr io.Writer) error {
		if *text && *jsonOut {
			return usagef("--text and --json exclude each other")
		}
		if duration <= 0 {
			return usagef("--duration must be positive")
		}
		m, c, err := sf.open(urls, stderr)
		if err != nil {
			return err
		}
		nt, err := m.AddNotifications(c.Notify, monitor.NotifyOptions{Log: stderr})
		if err != nil {
			return err
		}
		runCtx, cancel := context.WithTimeout(ctx, duration)
		defer cancel()
		if err := m.Run(runCtx); err != nil {
			return errors.Join(err, stopNotifications(nt))
		}
		m.EvaluateNow()
		snap := m.Store.Snapshot(time.Now(), window)
		doc := report.Build(snap, m.SLO)
		doc.Diagnosis = m.Diagnosis.Latest()
		if *jsonOut {
			err = report.WriteJSON(stdout, doc)
		} else {
			err = report.WriteText(stdout, doc)
		}
		return errors.Join(err, stopNotifications(nt), nothingMeasured(snap.Sources, duration))
	}
}

// nothingMeasured is the error of a read-out no source could measure:
// none reported within the run, or every one failed. A script reading
// the exit status must not take an outage for a quiet fleet; the
// read-out is still printed.
func nothingMeasured(sources []telemetry.SourceStatus, ran time.Duration) error {
	if len(sources) == 0 {
		return fmt.Errorf("no source reported within --duration %s: nothing was measured", ran)
	}
	var failed []string
	for _, st := range sources {
		if st.State != telemetry.Error {
			return nil
		}
		failed = append(failed, st.Name)
	}
	slices.Sort(failed)
	return fmt.Errorf("every source failed (%s): nothing was measured", strings.Join(failed, ", "))
}
