package telemetry

import (
	"strconv"
	"time"
)

// sourceReport is a source's last status and when it came. A source that
// names an interval promises a report at least that often.
type sourceReport struct {
	status   SourceStatus
	at       time.Time
	interval time.Duration
}

// statusAt is the status as of now: a source that promised a report every
// interval and has sent none for StaleIntervals of them (at least
// MinStaleAfter) is stale, whatever its last report said, since a source
// stuck in a refresh (a store that accepts queries and never answers)
// reports nothing at all. Sources whose work may outlast any multiple of
// their interval (a probe's stream) name none.
func (r sourceReport) statusAt(now time.Time, cfg StoreConfig) SourceStatus {
	st := r.status
	if r.interval <= 0 || (st.State != Live && st.State != NoData) {
		return st
	}
	after := max(time.Duration(cfg.StaleIntervals*float64(r.interval)), cfg.MinStaleAfter)
	if silent := now.Sub(r.at); silent > after {
		st.State = Stale
		st.Err = "no report for " + seconds(silent) + " (one expected every " + seconds(r.interval) +
			"): the source is stuck, or what it reads does not answer"
	}
	return st
}

// seconds is d in whole seconds (milliseconds below one).
func seconds(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return strconv.FormatInt(int64(d.Round(time.Second)/time.Second), 10) + "s"
}
