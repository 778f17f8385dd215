package scrape

import (
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// targetDown says, after a failed scrape of a target whose scrapes have
// worked, that its endpoints are down (telemetry.TargetUp 0, and
// LabelTarget with since when and why), as Prometheus' up would. A target
// that never answered is no down target: nothing was ever up.
func (s *Scraper) targetDown(at time.Time, reason string) {
	st := &s.st
	if st.lastOK.IsZero() {
		return
	}
	if st.downSince.IsZero() {
		st.downSince = at
	}
	label := telemetry.FormatTarget(telemetry.TargetHealth{State: telemetry.TargetDown, Since: st.downSince, Reason: "scrape failed: " + reason})
	for _, name := range st.endpointNames() {
		s.sink.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: at, Endpoint: name, Source: s.source,
			Interval: s.cfg.Interval, Info: &telemetry.Endpoint{Name: name, Labels: map[string]string{telemetry.LabelTarget: label}}})
		s.sink.Observe(targetUp(s.source, name, at, s.cfg.Interval, 0))
	}
}

// targetUp is an endpoint's TargetUp sample.
func targetUp(source, endpoint string, at time.Time, interval time.Duration, v float64) telemetry.Observation {
	return telemetry.Observation{Kind: telemetry.KindSample, At: at, Endpoint: endpoint, Source: source,
		Signal: telemetry.TargetUp, Value: v, Interval: interval}
}
