package loop

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestNextWaitJitter(t *testing.T) {
	for range 100 {
		w := nextWait(time.Second, 0.1, 0)
		if w < 900*time.Millisecond || w > 1100*time.Millisecond {
			t.Fatalf("wait %v", w)
		}
	}
	for range 100 { // jitter is capped at 0.5 for every source
		if w := nextWait(time.Second, 3, 0); w < 500*time.Millisecond || w > 1500*time.Millisecond {
			t.Fatalf("wait %v with jitter 3, want within 1s ± 50%%", w)
		}
	}
	if w := nextWait(time.Second, 0.1, 5*time.Second); w != 100*time.Millisecond {
		t.Fatalf("slow scrape wait %v", w)
	}
}

func TestRunUntilCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	err := Run(ctx, 5*time.Millisecond, 0.1, func(context.Context) error {
		if n.Add(1) == 3 {
			cancel()
		}
		return errors.New("ignored")
	})
	if !errors.Is(err, context.Canceled) || n.Load() != 3 {
		t.Fatalf("err %v after %d calls", err, n.Load())
	}
}

// The metrics page is found from a base URL or from the page's own URL,
// behind a path prefix too, and a custom path is appended once.
func TestTargetMetricsPage(t *testing.T) {
	for _, c := range []struct{ url, path, wantURL, wantPath string }{
		{"http://h:9400", "", "http://h:9400", "/metrics"},
		{"http://h:9400/metrics", "", "http://h:9400", "/metrics"},
		{"http://h:9400/metrics/", "", "http://h:9400", "/metrics"},
		{"http://gw/dcgm-1", "", "http://gw/dcgm-1", "/metrics"},
		{"http://gw/dcgm-1/metrics", "", "http://gw/dcgm-1", "/metrics"},
		{"http://h:8000", "/v1/metrics", "http://h:8000", "/v1/metrics"},
		{"http://h:8000/v1/metrics", "/v1/metrics", "http://h:8000", "/v1/metrics"},
		{"http://h:8000/xmetrics", "", "http://h:8000/xmetrics", "/metrics"},
	} {
		got := Target{URL: c.url, Path: c.path}.WithDefaults()
		if got.URL != c.wantURL || got.Path != c.wantPath {
			t.Errorf("%s + %q: %s + %s, want %s + %s", c.url, c.path, got.URL, got.Path, c.wantURL, c.wantPath)
		}
		if got.Interval != DefaultInterval || got.Jitter != DefaultJitter || got.HTTP.Timeout != DefaultTimeout || got.Now == nil {
			t.Errorf("defaults not applied: %+v", got)
		}
	}
}
