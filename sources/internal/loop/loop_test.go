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
