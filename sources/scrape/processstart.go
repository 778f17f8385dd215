package scrape

import (
	"math"
	"time"

	"github.com/ttftop/ttftop/sources/scrape/expo"
)

// processStartFamily is the start time (Unix seconds) that the Prometheus
// client libraries' process collector exports by default (vLLM and NIM
// pages have it: internal/fixtures/testdata/metrics). A new value is a
// new process: every rate of the target starts afresh at once, even when
// the new life's counters have already passed the old ones' values and
// no _created says so.
const processStartFamily = "process_start_time_seconds"

// wants reports whether the page's family name is parsed: the engines'
// families and the process start.
func (s *Scraper) wants(name string) bool {
	return name == processStartFamily || s.table.Wants(name)
}

// noteProcessStart reads the page's process start and reports whether the
// process is new since the last page that had one; a restart is then
// dated by the new start (at the latest, now).
func (st *state) noteProcessStart(page *expo.Page, now time.Time) bool {
	f := page.Families[processStartFamily]
	if f == nil || f.Err != nil {
		return false
	}
	var start float64
	for _, ser := range f.Series {
		if !math.IsNaN(ser.Value) && !math.IsInf(ser.Value, 0) {
			start = max(start, ser.Value)
		}
	}
	old := st.processStart
	if start == 0 {
		return false
	}
	st.processStart = start
	if old == 0 || start <= old {
		return false
	}
	st.restartedAt, st.restartedHow = time.UnixMilli(int64(math.Round(start*1000))), processRestarted
	if st.restartedAt.After(now) {
		st.restartedAt = now // the target's clock ahead of ours
	}
	return true
}

// How a restart was seen, as the restarted label says it.
const (
	processRestarted = "process restarted"
	counterReset     = "counter reset"
)
