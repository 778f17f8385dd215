package record

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

var t0 = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

const probeSrc = "probe:http://10.0.0.1:8000/v1/chat/completions"
const scrapeSrc = "scrape:http://10.0.0.1:8000/metrics"

// mixed returns n observations of every kind, one every step, with the
// awkward values a recording must survive: NaN, +Inf buckets, escapes,
// non-ASCII.
func mixed(n int, step time.Duration) []telemetry.Observation {
	out := make([]telemetry.Observation, 0, n)
	for i := 0; len(out) < n; i++ {
		at := t0.Add(time.Duration(i) * step)
		ep := fmt.Sprintf("ep-%d", i%3)
		switch i % 10 {
		case 0:
			out = append(out, telemetry.Observation{Kind: telemetry.KindEndpoint, At: at, Endpoint: ep, Source: probeSrc, Interval: 10 * time.Second,
				Info: &telemetry.Endpoint{Name: ep, Model: "Llama \"3\" ünïcode", Engine: telemetry.EngineVLLM, Labels: map[string]string{"api": "openai-chat"}}})
		case 1, 2:
			out = append(out, telemetry.Observation{Kind: telemetry.KindSample, At: at, Endpoint: ep, Signal: telemetry.TTFT, Source: probeSrc, Value: 0.1 + float64(i)/1e4, Interval: 10 * time.Second, Approx: i%4 == 1})
		case 3:
			out = append(out, telemetry.Observation{Kind: telemetry.KindSample, At: at, Endpoint: ep, Signal: telemetry.KVCache, Source: scrapeSrc, Value: math.NaN()})
		case 4:
			out = append(out, telemetry.Observation{Kind: telemetry.KindHistogram, At: at, Endpoint: ep, Signal: telemetry.TTFT, Source: scrapeSrc, Value: 1.5, Interval: 5 * time.Second,
				Buckets: []telemetry.Bucket{{UpperBound: 0.1, Count: 1}, {UpperBound: 0.5, Count: 3}, {UpperBound: math.Inf(1), Count: 4}}})
		case 5:
			out = append(out, telemetry.Observation{Kind: telemetry.KindNoData, At: at, Endpoint: ep, Signal: telemetry.Waiting, Source: scrapeSrc})
		case 6:
			out = append(out, telemetry.Observation{Kind: telemetry.KindFailure, At: at, Endpoint: ep, Source: probeSrc, Err: "timeout: no token\nwithin 30s \x1b"})
		case 7:
			out = append(out, telemetry.Observation{Kind: telemetry.KindProbe, At: at, Endpoint: ep, Source: probeSrc, Interval: 10 * time.Second,
				Probe: &telemetry.ProbeRecord{OK: true, TTFTms: 123.4, TPOTms: 15.5, E2Ems: 1100, OutputTokens: 64, TokensSource: "usage", ITLms: []float64{15, 16, 0}, TokensPerEvent: []int{1, 1, 2}}})
		case 8:
			out = append(out, telemetry.Observation{Kind: telemetry.KindSource, At: at, Source: probeSrc,
				Status: &telemetry.SourceStatus{Name: probeSrc, Kind: "probe", State: telemetry.Live, LastOK: at, Latency: 1200 * time.Millisecond}})
		case 9:
			out = append(out, telemetry.Observation{Kind: telemetry.KindLiveText, At: at, Endpoint: ep, Source: probeSrc, Live: &telemetry.LiveText{Text: "hello", Tokens: 3, TPS: 50}})
		}
	}
	return out
}

// withoutLive drops live text, as the writer does by default.
func withoutLive(obs []telemetry.Observation) []telemetry.Observation {
	var out []telemetry.Observation
	for _, o := range obs {
		if o.Kind != telemetry.KindLiveText {
			out = append(out, o)
		}
	}
	return out
}

// record writes obs to a new file in dir and closes it.
func record(t testing.TB, name string, obs []telemetry.Observation, opts ...WriterOption) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	w, err := NewWriter(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range obs {
		w.Observe(o)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// openReader opens a recording, closed (and its error reported) at
// cleanup.
func openReader(t testing.TB, path string) *Reader {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// readAll reads every observation and the error that ended the read.
func readAll(t testing.TB, path string) ([]telemetry.Observation, error) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}()
	var out []telemetry.Observation
	for {
		o, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, o)
	}
}

// sameObs compares observations, NaN equal to NaN.
func sameObs(a, b telemetry.Observation) bool {
	if math.IsNaN(a.Value) && math.IsNaN(b.Value) {
		a.Value, b.Value = 0, 0
	}
	return reflect.DeepEqual(a, b)
}

func checkSame(t *testing.T, got, want []telemetry.Observation) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d observations, wrote %d", len(got), len(want))
	}
	for i := range want {
		if !sameObs(got[i], want[i]) {
			t.Fatalf("observation %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// countSink counts what it receives.
type countSink struct {
	mu  sync.Mutex
	n   int
	ats []time.Time
}

func (c *countSink) Observe(o telemetry.Observation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.ats = append(c.ats, o.At)
}

func (c *countSink) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
