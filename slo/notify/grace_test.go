package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// failingQueue is a queue whose every attempt fails as /bin/false does.
func failingQueue(retries int, backoff time.Duration, log *healthLog) *queue[int] {
	return newQueue(queueOptions{name: "on-alert /bin/false", retry: newRetryPolicy(retries, backoff), report: log.add},
		func(context.Context, int) error { return errors.New("exit status 1") })
}

func details(hs []Health) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Detail())
	}
	return strings.Join(out, "\n")
}

// QA L4: at exit a notification failing its default 1 s, 2 s, 4 s backoff
// said "attempt 1 of 4", then "gave up after 3 attempts", then "still
// trying at exit: context deadline exceeded". Attempts are counted N of M
// throughout, the retry the 5 s grace cannot hold is not promised (nor
// waited for), and the shutdown says the grace cut it short.
func TestExitGraceCutsRetriesShortAndSaysSo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log healthLog
		q := failingQueue(0, 0, &log) // the defaults: 4 attempts, 1 s doubling
		start := time.Now()
		q.push(1)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := q.shutdown(ctx)
		took := time.Since(start)
		want := "exit status 1 (attempt 1 of 4, retrying in 1s)\n" +
			"exit status 1 (attempt 2 of 4, retrying in 2s)\n" +
			"exit status 1 (gave up after attempt 3 of 4: the exit grace leaves no time for attempt 4; 1 undelivered)"
		if got := details(log.all()); got != want {
			t.Errorf("reports:\n%s\nwant:\n%s", got, want)
		}
		var ge *GraceError
		if !errors.As(err, &ge) || err.Error() != "the 5s exit grace cut delivery short after attempt 3 of 4" {
			t.Errorf("shutdown: %v, want the grace named with the attempts made", err)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("shutdown: %v: the worker ended within the grace, nothing was cut mid-flight", err)
		}
		// Attempts at 0 s, 1 s, 3 s; the 4th would start at 7 s.
		if took != 3*time.Second {
			t.Errorf("shutdown took %v, want 3s: the retry past the grace was waited for", took)
		}
		if s := q.stats(); s.Failed != 1 || s.Retried != 2 || s.Undelivered() != 1 {
			t.Errorf("stats %+v", s)
		}
	})
}

// A retry promised before the exit began, whose wait the grace ends in,
// is given up at the deadline and said so; so is an attempt in flight.
func TestExitGraceEndingMidRetryOrMidAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log healthLog
		q := failingQueue(1, 4*time.Second, &log)
		q.push(1)
		synctest.Wait() // attempt 1 failed; the worker waits its 4 s
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := q.shutdown(ctx)
		hs := log.all()
		if len(hs) != 2 || hs[1].Detail() != "exit status 1 (gave up after attempt 1 of 2: the exit grace leaves no time for attempt 2; 1 undelivered)" {
			t.Errorf("reports:\n%s", details(hs))
		}
		if !errors.Is(err, context.DeadlineExceeded) || err.Error() != "the 1s exit grace cut delivery short after attempt 1 of 2" {
			t.Errorf("shutdown: %v", err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		var log healthLog
		hung := newQueue(queueOptions{name: "on-alert hang", retry: newRetryPolicy(0, 0), report: log.add},
			func(ctx context.Context, _ int) error { <-ctx.Done(); return fmt.Errorf("killed: %w", ctx.Err()) })
		hung.push(1)
		hung.push(2) // never tried: dropped
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err := hung.shutdown(ctx)
		if hs := log.all(); len(hs) != 1 || !hs[0].GraceEnded || hs[0].Attempt != 1 || hs[0].MaxAttempts != 4 {
			t.Errorf("reports %+v", hs)
		}
		if err == nil || err.Error() != "the 2s exit grace cut delivery short after attempt 1 of 4" {
			t.Errorf("shutdown: %v", err)
		}
		if s := hung.stats(); s.Failed != 1 || s.Dropped != 1 {
			t.Errorf("stats %+v", s)
		}
	})
}
