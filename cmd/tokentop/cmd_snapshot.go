package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tokentop/tokentop/report"
)

func init() {
	register(command{name: "snapshot", summary: "run the sources for a while and print one JSON read-out", run: runSnapshot})
}

const snapshotUsage = `tokentop snapshot [URL...] [--scrape URL] [--prometheus URL] [--dcgm URL] [--config FILE] [flags]

Runs the configured sources for --duration, then prints one JSON document:
{"endpoints": [...], "sources": [...]}. Each endpoint has name, model,
engine and signals (ttft, tpot, itl, e2e, output_tps, running, waiting,
kv_cache, gpu_mem_bw, mbu, error_rate; absent when not known), each with
unit, p50/p90/p95/p99 or value, source, state and observed_at.`

func runSnapshot(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("snapshot", snapshotUsage, stderr)
	var sf sourceFlags
	sf.bind(fs)
	duration := fs.Duration("duration", 15*time.Second, "how long to collect before printing")
	window := fs.Duration("window", 5*time.Minute, "quantile window of the read-out")
	text := fs.Bool("text", false, "print a plain-text table instead of JSON")
	urls, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *duration <= 0 {
		return fmt.Errorf("--duration must be positive")
	}
	m, _, err := sf.open(urls, stderr)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	if err := m.Run(runCtx); err != nil {
		return err
	}
	m.EvaluateNow()
	snap := m.Store.Snapshot(time.Now(), *window)
	if *text {
		return report.Text(stdout, snap)
	}
	return report.JSON(stdout, snap)
}
