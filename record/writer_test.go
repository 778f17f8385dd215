package record

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

func TestRoundTrip(t *testing.T) {
	obs := mixed(500, 7*time.Second) // about an hour: ~60 segments
	for _, name := range []string{"rec.jsonl", "rec.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			path := record(t, name, obs)
			got, err := readAll(t, path)
			if err != nil {
				t.Fatal(err)
			}
			checkSame(t, got, withoutLive(obs))
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if gz := len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b; gz != strings.HasSuffix(name, ".gz") {
				t.Errorf("gzip = %v for %s", gz, name)
			}
			entries, err := readIndexFile(indexPath(path), int64(len(raw)))
			if err != nil || len(entries) < 50 {
				t.Fatalf("index: %d entries, %v", len(entries), err)
			}
			// The scanned index must agree with the written one.
			scanned, err := scanIndex(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(scanned) != len(entries) {
				t.Fatalf("scanned %d segments, index has %d", len(scanned), len(entries))
			}
			for i := 1; i < len(entries); i++ {
				if scanned[i] != entries[i] {
					t.Fatalf("segment %d: scanned %+v, index %+v", i, scanned[i], entries[i])
				}
			}
		})
	}
}

func TestLiveTextOption(t *testing.T) {
	obs := mixed(40, time.Second)
	got, err := readAll(t, record(t, "live.jsonl", obs, WithLiveText()))
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, got, obs)
}

func TestAlertsAndUTC(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	w, err := NewWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	zone := time.FixedZone("X", 3600)
	w.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: t0.In(zone), Endpoint: "e", Signal: telemetry.TTFT, Source: probeSrc, Value: 1})
	type transition struct {
		Objective, From, To string
	}
	if err := w.WriteAlert(t0.Add(time.Second), transition{"ttft", "pending", "firing"}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAlert(t0, func() {}); err == nil {
		t.Error("WriteAlert accepted a value JSON cannot encode")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Error("second Close returned nil")
	}
	r := openReader(t, path)
	e, err := r.NextEntry()
	if err != nil || e.Observation.At != t0 || e.Observation.At.Location() != time.UTC {
		t.Fatalf("first entry %+v %v: want the instant in UTC", e, err)
	}
	e, err = r.NextEntry()
	if err != nil || e.Observation.Kind != KindAlert || !e.Observation.At.Equal(t0.Add(time.Second)) {
		t.Fatalf("alert entry %+v %v", e, err)
	}
	var tr transition
	if err := json.Unmarshal(e.Alert, &tr); err != nil || tr.To != "firing" {
		t.Fatalf("alert %s: %v", e.Alert, err)
	}
	if _, err := r.NextEntry(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the alert: %v, want EOF", err)
	}
}

func TestRefusesOverwrite(t *testing.T) {
	path := record(t, "x.jsonl", mixed(3, time.Second))
	if _, err := NewWriter(path); err == nil {
		t.Fatal("NewWriter overwrote an existing recording")
	}
}

// TestCrashSafety reads the recording while the writer is still open: what
// was observed more than a flush interval ago must be there.
func TestCrashSafety(t *testing.T) {
	for _, name := range []string{"open.jsonl", "open.jsonl.gz"} {
		// The flusher's ticker runs on synctest's clock: one flush interval
		// passes once every goroutine waits, so the flush has happened
		// (no wall-clock margin to guess).
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), name)
				w, err := NewWriter(path)
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := w.Close(); err != nil {
						t.Error(err)
					}
				}()
				obs := withoutLive(mixed(200, time.Second))
				for _, o := range obs {
					w.Observe(o)
				}
				time.Sleep(DefaultFlushInterval)
				synctest.Wait()
				got, err := readAll(t, path)
				// Everything flushed is readable, then the recording ends
				// early: a gzip stream without its end, a plain file on a
				// line boundary without its closing line.
				var d *DamageError
				if !errors.As(err, &d) || d.Replayed != int64(len(obs)) || !d.Unfinished() {
					t.Errorf("open recording: %v", err)
				}
				checkSame(t, got, obs)
			})
		})
	}
}

func TestConcurrentObserve(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl.gz")
	w, err := NewWriter(path, WithFlushInterval(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				w.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: t0.Add(time.Duration(i) * 50 * time.Millisecond),
					Endpoint: "e", Signal: telemetry.ITL, Source: probeSrc, Value: float64(g)})
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: t0}) // after Close: ignored
	if s := w.Stats(); s.Observations != 16000 || s.Dropped != 0 {
		t.Errorf("stats %+v", s)
	}
	got, err := readAll(t, path)
	if err != nil || len(got) != 16000 {
		t.Fatalf("read %d: %v", len(got), err)
	}
}

func TestWriteTransition(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl.gz")
	w, err := NewWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	budget := 0.5
	tr := slo.Transition{At: t0, From: slo.Pending, To: slo.Firing, Bell: true,
		Alert: slo.Alert{Objective: "ttft", Endpoint: "e", State: slo.Firing, FiredAt: t0, Value: 6, Threshold: 5, BudgetRemaining: &budget}}
	if err := w.WriteTransition(tr); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := openReader(t, path)
	e, err := r.NextEntry()
	if err != nil {
		t.Fatal(err)
	}
	var got slo.Transition
	if err := json.Unmarshal(e.Alert, &got); err != nil {
		t.Fatal(err)
	}
	if !e.Observation.At.Equal(t0) || got.To != slo.Firing || *got.Alert.BudgetRemaining != 0.5 || !got.Alert.FiredAt.Equal(t0) {
		t.Errorf("transition came back as %+v at %v", got, e.Observation.At)
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("Next skips alerts: %v", err)
	}
}
