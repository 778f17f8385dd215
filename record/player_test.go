package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

func errorsAs(err error, d **DamageError) bool { return errors.As(err, d) }

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// seconds is one TTFT sample a second for n seconds from t0.
func seconds(n int) []telemetry.Observation {
	out := make([]telemetry.Observation, n)
	for i := range out {
		out[i] = telemetry.Observation{Kind: telemetry.KindSample, At: t0.Add(time.Duration(i) * time.Second),
			Endpoint: "e", Signal: telemetry.TTFT, Source: probeSrc, Value: float64(i)}
	}
	return out
}

// The player paces on synctest's clock: time.Sleep advances it once
// every goroutine waits, and synctest.Wait returns when the player has
// done all it can at that instant, so each step is exact and a pause is
// seen to deliver nothing without waiting for wall time.
func TestPlayerSpeedPauseSeek(t *testing.T) {
	path := record(t, "p.jsonl.gz", seconds(21))
	synctest.Test(t, func(t *testing.T) {
		var alerts []time.Time
		p, err := NewPlayer(path, PlayerOptions{NewSink: func() telemetry.Sink { return &countSink{} }, Speed: 10,
			OnAlert: func(at time.Time, _ json.RawMessage) { alerts = append(alerts, at) }})
		if err != nil {
			t.Fatal(err)
		}
		if first, last := p.Bounds(); !first.Equal(t0) || !last.Equal(t0.Add(20*time.Second)) {
			t.Fatalf("bounds %v %v", first, last)
		}
		count := func() int { return p.Sink().(*countSink).count() }
		if count() != 1 || !p.Clock().Equal(t0) {
			t.Fatalf("at start: %d delivered, clock %v", count(), p.Clock())
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		advance := func(d time.Duration) {
			time.Sleep(d)
			synctest.Wait()
		}

		// 10×: half a second of wall time is five seconds of recording.
		advance(500 * time.Millisecond)
		if n, c := count(), p.Clock(); n != 6 || !c.Equal(t0.Add(5*time.Second)) {
			t.Errorf("at 10× after 0.5 s: %d delivered, clock t0+%v; want 6 and t0+5s", n, c.Sub(t0))
		}
		advance(50 * time.Millisecond) // between two observations the clock runs
		if c := p.Clock(); !c.Equal(t0.Add(5500 * time.Millisecond)) {
			t.Errorf("clock between observations = %v, want t0+5.5s", c.Sub(t0))
		}

		p.Pause()
		advance(10 * time.Second)
		if count() != 6 || !p.Clock().Equal(t0.Add(5500*time.Millisecond)) {
			t.Errorf("paused: %d delivered, clock %v", count(), p.Clock().Sub(t0))
		}
		p.Resume()
		p.SetSpeed(1)
		advance(499 * time.Millisecond)
		if count() != 6 {
			t.Error("1×: t0+6s delivered before it was due")
		}
		advance(time.Millisecond) // 1×: t0+6s is due now
		if count() != 7 {
			t.Errorf("1×: %d delivered at t0+6s, want 7", count())
		}

		p.SetSpeed(Fastest)
		synctest.Wait()
		if n, c := count(), p.Clock(); n != 21 || !c.Equal(t0.Add(20*time.Second)) {
			t.Errorf("at the end: %d delivered, clock t0+%v", n, c.Sub(t0))
		}

		if err := p.Seek(t0.Add(3 * time.Second)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := count(); n != 21 { // 4 fed by the seek, 17 played
			t.Errorf("after the seek: %d delivered, want 21", n)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if err := p.Close(); err != nil {
			t.Error(err)
		}
		if len(alerts) != 0 {
			t.Errorf("alerts %v from a recording without any", alerts)
		}
	})
}

func TestPlayerStopAtEndAndDamage(t *testing.T) {
	path := record(t, "d.jsonl", seconds(30))
	p, err := NewPlayer(path, PlayerOptions{NewSink: func() telemetry.Sink { return &countSink{} }, Speed: Fastest, StopAtEnd: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(context.Background()); err != nil {
		t.Fatalf("clean end: %v", err)
	}
	if n := p.Sink().(*countSink).count(); n != 30 {
		t.Errorf("%d delivered", n)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	lines := plainLines(t, path)
	if err := os.Truncate(path, offsetOf(lines, 20)+5); err != nil {
		t.Fatal(err)
	}
	p, err = NewPlayer(path, PlayerOptions{NewSink: func() telemetry.Sink { return &countSink{} }, Speed: Fastest, StopAtEnd: true})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Run(context.Background())
	if d := (*DamageError)(nil); !errorsAs(err, &d) || d.Line != 20 {
		t.Fatalf("damaged recording: Run = %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// snapJSON renders a snapshot for comparison.
func snapJSON(t *testing.T, s telemetry.Snapshot) string {
	t.Helper()
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// seekScenario is 40 minutes of four endpoints: probes every 2 s
// (TTFT, three ITL gaps, success, the record), scrape histograms every
// 5 s; endpoints and sources announced once at the start; ep-1's ITL goes
// silent after 10 minutes; ep-2's probes fail from minute 30.
func seekScenario() []telemetry.Observation {
	var out []telemetry.Observation
	for e := range 4 {
		ep := fmt.Sprintf("ep-%d", e)
		out = append(out, telemetry.Observation{Kind: telemetry.KindEndpoint, At: t0, Endpoint: ep, Source: probeSrc, Info: &telemetry.Endpoint{Name: ep, Model: "m", Engine: telemetry.EngineVLLM}},
			telemetry.Observation{Kind: telemetry.KindSource, At: t0, Source: fmt.Sprintf("probe:%d", e), Status: &telemetry.SourceStatus{Name: ep + "-probe", Kind: "probe", State: telemetry.Live}})
	}
	for s := 0; s < 40*60; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		for e := range 4 {
			ep := fmt.Sprintf("ep-%d", e)
			obs := func(kind telemetry.Kind, sig telemetry.Signal, v float64) telemetry.Observation {
				return telemetry.Observation{Kind: kind, At: at.Add(time.Duration(e) * time.Millisecond), Endpoint: ep, Signal: sig, Source: probeSrc, Value: v, Interval: 2 * time.Second}
			}
			if s%2 == 0 {
				if e == 2 && s >= 30*60 {
					out = append(out, obs(telemetry.KindSample, telemetry.ProbeSuccess, 0))
					f := obs(telemetry.KindFailure, "", 0)
					f.Err = "timeout"
					out = append(out, f)
				} else {
					out = append(out, obs(telemetry.KindSample, telemetry.TTFT, 0.1+float64((s*7+e)%50)/1000))
					if !(e == 1 && s >= 10*60) {
						for k := range 3 {
							out = append(out, obs(telemetry.KindSample, telemetry.ITL, 0.01+float64((s+k)%9)/1000))
						}
					}
					out = append(out, obs(telemetry.KindSample, telemetry.ProbeSuccess, 1))
				}
				p := obs(telemetry.KindProbe, "", 0)
				p.Probe = &telemetry.ProbeRecord{OK: true, TTFTms: 100}
				out = append(out, p)
			}
			if s%5 == 0 {
				h := obs(telemetry.KindHistogram, telemetry.E2E, 3)
				h.Source, h.Interval = scrapeSrc, 5*time.Second
				h.Buckets = []telemetry.Bucket{{UpperBound: 0.5, Count: float64(s % 3)}, {UpperBound: 1, Count: 2}, {UpperBound: 2.5, Count: 3}, {UpperBound: math.Inf(1), Count: 3}}
				out = append(out, h)
			}
		}
	}
	return out
}

func TestSeekMatchesFullReplay(t *testing.T) {
	obs := seekScenario()
	path := record(t, "seek.jsonl.gz", obs)
	cfg := telemetry.StoreConfig{MaxWindow: 10 * time.Minute, ChartSpan: 10 * time.Minute}
	at := t0.Add(35 * time.Minute)
	full := telemetry.NewStore(cfg)
	for _, o := range obs {
		if !o.At.After(at) {
			full.Observe(o)
		}
	}
	p, err := NewPlayer(path, PlayerOptions{NewSink: func() telemetry.Sink { return telemetry.NewStore(cfg) },
		Window: 2 * time.Minute, History: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	}()
	if err := p.Seek(at); err != nil {
		t.Fatal(err)
	}
	first := p.Sink().(*telemetry.Store)
	// The first frame is exact over Window for every live endpoint (ep-2
	// is failing: its fallback quantiles come from older data, which the
	// history fill brings).
	want, got := full.Snapshot(at, 2*time.Minute), first.Snapshot(at, 2*time.Minute)
	for i := range want.Endpoints {
		if want.Endpoints[i].Name == "ep-2" {
			continue
		}
		if w, g := snapJSON(t, telemetry.Snapshot{Endpoints: want.Endpoints[i : i+1]}), snapJSON(t, telemetry.Snapshot{Endpoints: got.Endpoints[i : i+1]}); w != g {
			t.Fatalf("first frame differs for %s:\nfull %s\nseek %s", want.Endpoints[i].Name, w, g)
		}
	}
	if w, g := snapJSON(t, telemetry.Snapshot{Sources: want.Sources}), snapJSON(t, telemetry.Snapshot{Sources: got.Sources}); w != g {
		t.Fatalf("sources differ:\nfull %s\nseek %s", w, g)
	}
	eventually(t, "the history fill", func() bool { return p.Sink() != telemetry.Sink(first) })
	store := p.Sink().(*telemetry.Store)
	for _, w := range []time.Duration{time.Minute, 2 * time.Minute, 10 * time.Minute} {
		if want, got := snapJSON(t, full.Snapshot(at, w)), snapJSON(t, store.Snapshot(at, w)); want != got {
			t.Fatalf("after the fill, window %s differs:\nfull %s\nseek %s", w, want, got)
		}
		for _, ep := range []string{"ep-0", "ep-3"} {
			if want, got := fmt.Sprint(full.Series(ep, telemetry.ITL, at, w, 60)), fmt.Sprint(store.Series(ep, telemetry.ITL, at, w, 60)); want != got {
				t.Fatalf("%s ITL chart over %s differs:\nfull %s\nseek %s", ep, w, want, got)
			}
		}
	}
	for _, w := range []time.Duration{2 * time.Minute, 10 * time.Minute} {
		snap, err := snapshotAt(path, at, w, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if want, got := snapJSON(t, full.Snapshot(at, w)), snapJSON(t, snap); want != got {
			t.Fatalf("SnapshotAt window %s differs:\nfull %s\ngot %s", w, want, got)
		}
	}
	// A zero time is the end of the recording.
	end, err := snapshotAt(path, time.Time{}, time.Minute, cfg)
	if err != nil || !end.At.Equal(obs[len(obs)-1].At) {
		t.Fatalf("SnapshotAt(end) at %v: %v", end.At, err)
	}
}

func TestSnapshotAtDamaged(t *testing.T) {
	path := record(t, "s.jsonl", seconds(600))
	lines := plainLines(t, path)
	cut := offsetOf(lines, 300) + 10
	if err := os.Truncate(path, cut); err != nil {
		t.Fatal(err)
	}
	snap, err := SnapshotAt(path, t0.Add(500*time.Second), time.Minute)
	if !isDamage(err) || len(snap.Endpoints) != 1 {
		t.Fatalf("damaged before t: %v, %d endpoints", err, len(snap.Endpoints))
	}
	if _, err := SnapshotAt(path, t0.Add(100*time.Second), time.Minute); err != nil {
		t.Fatalf("damage after t is not an error: %v", err)
	}
}

// TestPlayerConcurrentUse drives a playing player from other goroutines,
// as a dashboard does, for the race detector.
func TestPlayerConcurrentUse(t *testing.T) {
	path := record(t, "c.jsonl.gz", seconds(3000))
	p, err := NewPlayer(path, PlayerOptions{NewSink: func() telemetry.Sink { return telemetry.NewStore(telemetry.StoreConfig{}) },
		Speed: 1000, Window: time.Minute, History: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 30 {
				switch (i + g) % 5 {
				case 0:
					if err := p.Seek(t0.Add(time.Duration(i*97) * time.Second)); err != nil {
						t.Error(err)
					}
				case 1:
					p.Pause()
					p.Resume()
				case 2:
					p.SetSpeed(float64(1 + i))
				default:
					_ = p.Sink().(*telemetry.Store).Snapshot(p.Clock(), time.Minute)
				}
			}
		}()
	}
	wg.Wait()
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
	if err := p.Close(); err != nil {
		t.Error(err)
	}
	if err := p.Seek(t0); err == nil {
		t.Error("Seek after Close succeeded")
	}
}
