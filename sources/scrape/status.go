package scrape

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// succeed emits a successful scrape: endpoints, observations, status.
func (s *Scraper) succeed(sc *scrape, latency time.Duration) {
	st := &s.st
	st.sweep()
	st.prevAt = sc.at
	st.lastOK = sc.at
	st.failures = 0
	st.engine = sc.det.Engine
	st.downSince = time.Time{}

	names := make([]string, 0, len(sc.models))
	byName := map[string]*modelVals{}
	for _, mv := range sc.models {
		if byName[mv.endpoint] == nil {
			names = append(names, mv.endpoint)
			byName[mv.endpoint] = mv
		}
	}
	if sc.hasSpec && len(names) == 0 && len(sc.det.Recognised) > 0 {
		// Recognised families but no series yet: still one endpoint.
		mv := &modelVals{model: sc.defModel, endpoint: s.host}
		if sc.defModel != "" {
			mv.endpoint = s.host + "/" + sc.defModel
		}
		names = append(names, mv.endpoint)
		byName[mv.endpoint] = mv
	}
	sort.Strings(names)
	clear(st.endpoints)
	var never map[telemetry.Signal]string
	if sc.hasSpec {
		if st.never == nil || st.neverOf != sc.spec.Engine {
			st.never, st.neverOf = sc.spec.Unmeasurable(), sc.spec.Engine
		}
		never = st.never
	}
	for _, name := range names {
		st.endpoints[name] = true
		mv := byName[name]
		s.sink.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: sc.at, Endpoint: name,
			Source: s.source, Interval: s.cfg.Interval,
			Info: &telemetry.Endpoint{Name: name, BaseURL: s.baseURL, Model: mv.model, Engine: sc.det.Engine,
				Unmeasurable: never, Labels: s.endpointLabels(sc.at, sc.role())}})
		s.sink.Observe(targetUp(s.source, name, sc.at, s.cfg.Interval, 1))
	}
	for _, rk := range sc.ranks {
		st.endpoints[rk.endpoint] = true
		info := rankEndpoint(rk, telemetry.Endpoint{BaseURL: s.baseURL, Model: rk.model, Engine: sc.det.Engine,
			Unmeasurable: never, Labels: s.endpointLabels(sc.at, sc.role())})
		s.sink.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: sc.at, Endpoint: rk.endpoint,
			Source: s.source, Interval: s.cfg.Interval, Info: &info})
		s.sink.Observe(targetUp(s.source, rk.endpoint, sc.at, s.cfg.Interval, 1))
	}
	for _, o := range sc.obs {
		s.sink.Observe(o)
	}
	st.observations = len(sc.obs)
	status := s.baseStatus(latency)
	status.State = telemetry.Live
	status.Recognised = sc.det.Recognised
	status.Warnings = append(status.Warnings, sc.warnings...)
	status.Description = describe(sc, len(names))
	if len(names) == 0 {
		status.State = telemetry.NoData
	}
	s.sink.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: sc.at, Source: s.source,
		Interval: s.cfg.Interval, Status: &status})
}

func describe(sc *scrape, endpoints int) string {
	switch {
	case sc.hasSpec && sc.s.cfg.Engine != "":
		return fmt.Sprintf("%s (configured), %d endpoint(s)", sc.spec.Title, endpoints)
	case sc.hasSpec:
		return fmt.Sprintf("%s (detected), %d endpoint(s)", sc.spec.Title, endpoints)
	case sc.det.Exporter != "":
		return fmt.Sprintf("%s page, not a serving engine: configure it as a gpu source", sc.det.Exporter)
	case len(sc.det.Recognised) > 0:
		return "engine unknown; recognised: " + strings.Join(sc.det.Recognised, ", ")
	}
	return fmt.Sprintf("engine unknown; no known metric among %d families", len(sc.page.Names))
}

func (s *Scraper) baseStatus(latency time.Duration) telemetry.SourceStatus {
	st := telemetry.SourceStatus{
		Name:     "scrape " + s.host,
		Kind:     telemetry.SourceScrape,
		URL:      strings.TrimPrefix(s.source, "scrape:"),
		LastOK:   s.st.lastOK,
		Failures: s.st.failures,
		Latency:  latency,
	}
	if s.client != nil && s.client.Insecure() {
		st.Warnings = append(st.Warnings, "TLS NOT VERIFIED")
	}
	return st
}

// endpointLabels are the labels each announcement sets: the target is up
// (LabelTarget taken off: no longer down), its role (configured, else the
// page's own, pageRole), and the restarted label, set for
// telemetry.RestartedFor after a restart (a counter went back, a new
// process start), then taken off ("").
func (s *Scraper) endpointLabels(now time.Time, pageRole string) map[string]string {
	labels := map[string]string{telemetry.LabelTarget: ""}
	if s.cfg.Role != "" {
		labels[telemetry.LabelRole] = s.cfg.Role
	} else if pageRole != "" {
		labels[telemetry.LabelRole] = pageRole
	}
	if at := s.st.restartedAt; !at.IsZero() {
		v := ""
		if now.Sub(at) < telemetry.RestartedFor {
			v = telemetry.RestartedLabel(at, s.st.restartedHow)
		}
		labels[telemetry.LabelRestarted] = v
	}
	return labels
}
