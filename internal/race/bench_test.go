package race

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/probetest"
)

// BenchmarkStartSkew races two loopback servers and reports how far apart
// the requests started (latest − earliest Result.Start): the median and
// the worst of b.N rounds. The target is under 1 ms; a busy machine shows
// in the worst case.
//
//	go test ./internal/race -run '^$' -bench StartSkew -benchtime 200x
func BenchmarkStartSkew(b *testing.B) {
	pace := probetest.Pace{TTFT: time.Millisecond, Gap: time.Millisecond, Answer: 2}
	a, c := probetest.StartPaced(b, pace), probetest.StartPaced(b, pace)
	probers := newProbers(b, a.URL, c.URL)
	skews := make([]time.Duration, 0, b.N)
	for b.Loop() {
		rd := Run(context.Background(), probers, Hooks{})
		if !rd.Results[0].OK || !rd.Results[1].OK {
			b.Fatalf("a racer failed: %s %s", rd.Results[0].Err, rd.Results[1].Err)
		}
		skews = append(skews, rd.StartSkew)
	}
	slices.Sort(skews)
	b.ReportMetric(float64(skews[len(skews)/2])/float64(time.Millisecond), "ms-median-skew")
	b.ReportMetric(float64(skews[len(skews)*99/100])/float64(time.Millisecond), "ms-p99-skew")
	b.ReportMetric(float64(skews[len(skews)-1])/float64(time.Millisecond), "ms-max-skew")
}
