package monitor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ttftop/ttftop/record"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// benchReplay records TTFTOP_BENCH_MINUTES (default 60) of 50 endpoints
// through a real monitor on a synthetic clock: a TTFT and a TPOT sample
// per endpoint every 2 s, an evaluation every second, and alerts flapping
// on a fifth of the endpoints (an episode every 4 minutes), so that each
// segment preamble carries alert state and a full resolved history.
//
//	go test ./internal/monitor -run '^$' -bench Replay -benchtime 3x
func benchReplay(b *testing.B) (string, time.Time, time.Time) {
	b.Helper()
	minutes := 60
	if m, err := strconv.Atoi(os.Getenv("TTFTOP_BENCH_MINUTES")); err == nil && m > 0 {
		minutes = m
	}
	start := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	now := start
	objs := []slo.Objective{
		{Name: "ttft-p95", Kind: slo.Percentile, Signal: telemetry.TTFT, Percentile: 0.95, Threshold: 5, Window: 30 * time.Second,
			For: 10 * time.Second, KeepFiringFor: 10 * time.Second},
		slo.DefaultObjectives()[1],
	}
	m := New(Options{Objectives: objs, Now: func() time.Time { return now }})
	path := filepath.Join(b.TempDir(), "bench.jsonl.gz")
	if err := m.AddRecorder(path); err != nil {
		b.Fatal(err)
	}
	const endpoints = 50
	gen := time.Now()
	for s := 0; s < minutes*60; s++ {
		now = start.Add(time.Duration(s) * time.Second)
		for i := s % 2; i < endpoints; i += 2 {
			ep := fmt.Sprintf("10.0.0.%d:8000/model", i)
			ttft := 0.3
			if i%5 == 0 && (s+i*7)%240 < 60 {
				ttft = 7 // over the 5 s objective for a minute
			}
			for sig, v := range map[telemetry.Signal]float64{telemetry.TTFT: ttft, telemetry.TPOT: 0.02} {
				m.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: now, Endpoint: ep, Signal: sig,
					Source: "probe:http://" + ep, Value: v, Interval: 2 * time.Second})
			}
		}
		now = now.Add(500 * time.Millisecond)
		m.EvaluateNow()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Run(ctx); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	if keep := os.Getenv("TTFTOP_BENCH_KEEP"); keep != "" {
		if raw, err := os.ReadFile(path); err == nil {
			_ = os.WriteFile(keep, raw, 0o644)
		}
	}
	b.Logf("generated %d min, %d endpoints, %.1f MiB, in %s", minutes, endpoints, float64(fi.Size())/(1<<20), time.Since(gen).Round(time.Millisecond))
	return path, start, now
}

func BenchmarkReplay(b *testing.B) {
	path, first, last := benchReplay(b)
	settings, _, err := record.ReadSettings(path)
	if err != nil {
		b.Fatal(err)
	}
	j := RecordedJudging(settings)
	mid := first.Add(last.Sub(first) / 2)
	b.Run("at-end", func(b *testing.B) {
		for b.Loop() {
			st, err := ReplayAt(path, last, 5*time.Minute, j)
			if err != nil || len(st.Alerts) == 0 {
				b.Fatalf("%d alerts: %v", len(st.Alerts), err)
			}
		}
	})
	// Judging again (no settings, or --slo-* flags): an evaluation every
	// second of the hour read.
	b.Run("at-end-judged-again", func(b *testing.B) {
		again := j
		again.AsRecorded = false
		for b.Loop() {
			if _, err := ReplayAt(path, last, 5*time.Minute, again); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What `--json --at` read before alerts: the store alone.
	b.Run("snapshot-at-end-store-only", func(b *testing.B) {
		for b.Loop() {
			if _, err := record.SnapshotAt(path, last, 5*time.Minute); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("seek-middle", func(b *testing.B) {
		var frame, full time.Duration
		for b.Loop() {
			start := time.Now()
			r, err := NewReplay(path, 1, j)
			if err != nil {
				b.Fatal(err)
			}
			if err := r.Player().Seek(mid); err != nil {
				b.Fatal(err)
			}
			if len(r.Alerts()) == 0 {
				b.Fatal("no alerts after the seek")
			}
			frame += time.Since(start)
			first := r.Player().Sink()
			for r.Player().Sink() == first {
				time.Sleep(5 * time.Millisecond)
			}
			full += time.Since(start)
			if err := r.Close(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(frame.Seconds()/float64(b.N), "s/first-frame")
		b.ReportMetric(full.Seconds()/float64(b.N), "s/full-history")
	})
	// The alternative to segment preambles with alert state: rebuild it by
	// reading every line from the start to the seek point.
	b.Run("from-start-to-middle", func(b *testing.B) {
		for b.Loop() {
			s := newReplaySink(j)
			if err := record.Feed(path, time.Time{}, mid, s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
