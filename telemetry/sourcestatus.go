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
	if (st.State == Live || st.State == NoData) && r.silent(now, cfg) {
		st.State = Stale
		st.Err = "no report for " + seconds(now.Sub(r.at)) + " (one expected every " + seconds(r.interval) +
			"): the source is stuck, or what it reads does not answer"
	}
	return st
}

// silent reports whether the source promised a report every interval and
// has sent none for StaleIntervals of them (at least MinStaleAfter).
func (r sourceReport) silent(now time.Time, cfg StoreConfig) bool {
	if r.interval <= 0 {
		return false
	}
	return now.Sub(r.at) > cfg.SilentAfter(r.interval)
}

// sourceStale reports whether the source of id has gone silent, or said
// itself stale (a refresh in flight far longer than refreshes take): its
// figures are then stale too, however recent their last value (a hung
// store's last histogram window is not news of now).
func (s *Store) sourceStale(id string, now time.Time) bool {
	r, ok := s.bySource[id]
	return ok && (r.status.State == Stale || r.silent(now, s.cfg))
}

// seconds is d in whole seconds (milliseconds below one).
func seconds(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return strconv.FormatInt(int64(d.Round(time.Second)/time.Second), 10) + "s"
}

// trackState is t's state at now, its source's newest report deciding
// whether an earlier failure is over. A live track of a stale or silent
// source is stale: everything built on the track (the preferred source of
// a signal, energy per token) must see it so, not only its own figure.
func (s *Store) trackState(t *track, now time.Time) State {
	st := t.stateAt(now, s.cfg, s.bySource[t.source].at)
	if st == Live && s.sourceStale(t.source, now) {
		return Stale
	}
	return st
}

// trackErr is t's error text, "" once its failure is over.
func (s *Store) trackErr(t *track) string {
	return t.errText(s.bySource[t.source].at)
}
