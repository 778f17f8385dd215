// Package race sends the same prompt to several endpoints at once and
// times each stream with the probe's core (sources/probe): a race. The
// connections are opened first, then every request is released from one
// barrier, so the requests start within a fraction of a millisecond of
// each other; how far apart they really started is measured and reported
// (Round.StartSkew), never assumed.
package race

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/ttftop/ttftop/sources/probe"
)

// Chunk is one token-bearing event of one racer, delivered as it is read
// off the wire (on the racer's goroutine).
type Chunk struct {
	Racer    int
	Progress probe.Progress
}

// Round is one race: every racer's result, in racer order.
type Round struct {
	Results []*probe.Result
	// StartSkew is the spread of the requests' starts (latest − earliest
	// Result.Start, the instant the request was about to be written on a
	// ready connection; see docs/definitions.md).
	StartSkew time.Duration
	// Positions are the finish positions (1 = first), 0 for a racer whose
	// request failed. A racer finishes when its last token arrives
	// (Start + E2E); equal instants share a position.
	Positions []int
	// WarmErrors are the connection warm-ups that failed, by racer (nil
	// when it succeeded): that racer's start then includes the connection
	// set-up its Result reports apart (DNS, Connect, TLS).
	WarmErrors []error
}

// Hooks follow a round as it runs; each, when not nil, is called from the
// racers' goroutines, concurrently.
type Hooks struct {
	Chunk func(Chunk)                      // every token-bearing event, as it is read
	Done  func(racer int, r *probe.Result) // a racer's request ended
}

// Run races once: it warms one connection per prober, then releases every
// request at the same instant.
func Run(ctx context.Context, probers []*probe.Prober, h Hooks) Round {
	n := len(probers)
	rd := Round{Results: make([]*probe.Result, n), WarmErrors: make([]error, n)}
	var warm sync.WaitGroup
	for i, p := range probers {
		warm.Go(func() { rd.WarmErrors[i] = p.Prewarm(ctx, 1) })
	}
	warm.Wait()

	// Every racer waits at the barrier before it is opened, so none is
	// still being scheduled when the others start.
	var ready, done sync.WaitGroup
	release := make(chan struct{})
	ready.Add(n)
	for i, p := range probers {
		done.Go(func() {
			var progress func(probe.Progress)
			if h.Chunk != nil {
				progress = func(pr probe.Progress) { h.Chunk(Chunk{Racer: i, Progress: pr}) }
			}
			ready.Done()
			<-release
			res := p.Do(ctx, progress)
			res.Seq = i + 1
			rd.Results[i] = res
			if h.Done != nil {
				h.Done(i, res)
			}
		})
	}
	ready.Wait()
	close(release)
	done.Wait()
	rd.StartSkew = startSkew(rd.Results)
	rd.Positions = Positions(rd.Results)
	return rd
}

// startSkew is the latest start minus the earliest.
func startSkew(rs []*probe.Result) time.Duration {
	if len(rs) == 0 {
		return 0
	}
	first, last := rs[0].Start, rs[0].Start
	for _, r := range rs[1:] {
		if r.Start.Before(first) {
			first = r.Start
		}
		if r.Start.After(last) {
			last = r.Start
		}
	}
	return last.Sub(first)
}

// Positions ranks the successful results by the instant their last token
// arrived (Start + E2E, monotonic clock); failed ones get 0.
func Positions(rs []*probe.Result) []int {
	type fin struct {
		i  int
		at time.Time
	}
	var fins []fin
	for i, r := range rs {
		if r != nil && r.OK {
			fins = append(fins, fin{i, r.Start.Add(r.E2E)})
		}
	}
	slices.SortStableFunc(fins, func(a, b fin) int { return a.at.Compare(b.at) })
	pos := make([]int, len(rs))
	for k, f := range fins {
		pos[f.i] = k + 1
		if k > 0 && f.at.Equal(fins[k-1].at) {
			pos[f.i] = pos[fins[k-1].i]
		}
	}
	return pos
}
