//go:build integration

package failuresuite

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// observation is one thing a scenario waits to see (FIRING on screen, an
// alert in Alertmanager...). check reports whether it holds now and when
// it was seen to (a document's or a screen's read time).
type observation struct {
	name  string
	check func() (time.Time, bool)
}

// watch polls every observation together, every 500 ms, until all have
// held or limit after start passes (start may lie ahead: an outage
// scheduled to begin), so each is timed on its own. What holds before
// start does not count. It returns, for those that held, when since start
// they were first seen.
func watch(limit time.Duration, start time.Time, obs ...observation) map[string]time.Duration {
	seen := map[string]time.Duration{}
	eventually(time.Until(start.Add(limit)), 500*time.Millisecond, func() bool {
		for _, o := range obs {
			if _, done := seen[o.name]; done {
				continue
			}
			if at, ok := o.check(); ok && !at.Before(start) {
				seen[o.name] = at.Sub(start)
			}
		}
		return len(seen) == len(obs)
	})
	return seen
}

// requireWithin fails the test for every observation not seen within
// bound, naming what was seen and when.
func requireWithin(t *testing.T, what string, bound time.Duration, seen map[string]time.Duration, names ...string) {
	t.Helper()
	for _, n := range names {
		d, ok := seen[n]
		switch {
		case !ok:
			t.Errorf("%s: %s never seen (limit passed); seen: %s", what, n, describeSeen(seen))
		case d > bound:
			t.Errorf("%s: %s after %s, later than %s", what, n, secs(d), bound)
		}
	}
}

func describeSeen(seen map[string]time.Duration) string {
	if len(seen) == 0 {
		return "nothing"
	}
	var parts []string
	for n, d := range seen {
		parts = append(parts, n+"="+secs(d))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// measured logs one scenario's figures in the fixed format the closing
// table is built from: MEASURED scenario=NAME key=value...; what was
// never seen reads "never".
func measured(t *testing.T, scenario string, seen map[string]time.Duration, keys ...string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "MEASURED scenario=%s", scenario)
	for _, k := range keys {
		if d, ok := seen[k]; ok {
			fmt.Fprintf(&b, " %s=%s", k, secs(d))
		} else {
			fmt.Fprintf(&b, " %s=never", k)
		}
	}
	t.Log(b.String())
}

// docSeen is an observation on a headless dashboard: the first document
// read at or after from that pred accepts.
func docSeen(h *headless, from time.Time, pred func(snapshotDoc) bool) func() (time.Time, bool) {
	next := 0
	return func() (time.Time, bool) {
		docs := h.all()
		for ; next < len(docs); next++ {
			if !docs[next].got.Before(from) && pred(docs[next].doc) {
				return docs[next].got, true
			}
		}
		return time.Time{}, false
	}
}

// screenSeen is an observation on a terminal: a screen read now that pred
// accepts.
func screenSeen(term *terminal, pred func(string) bool) func() (time.Time, bool) {
	return func() (time.Time, bool) {
		scr, err := term.screen()
		if err != nil {
			return time.Time{}, false
		}
		return time.Now(), pred(scr)
	}
}

// amSeen is an observation on Alertmanager: the endpoint's alert active
// (want true) or not (want false).
func amSeen(am *alertmanager, endpoint string, match func(string) bool, want bool) func() (time.Time, bool) {
	return func() (time.Time, bool) {
		active, err := am.activeFor(endpoint, match)
		return time.Now(), err == nil && active == want
	}
}
