package telemetry

import (
	"maps"
	"sort"
	"sync"
	"time"
)

// StoreConfig bounds the store's memory and decides staleness. The zero
// value is replaced by DefaultStoreConfig.
type StoreConfig struct {
	ChartResolution time.Duration // chart slot width
	ChartSpan       time.Duration // how far back charts go
	HistResolution  time.Duration // histogram increment slot width
	MaxWindow       time.Duration // longest quantile window
	MaxSamples      int           // raw samples kept per distribution track
	StaleIntervals  float64       // stale after this many missed refreshes
	MinStaleAfter   time.Duration // never stale sooner than this
	ProbeHistory    int           // finished probes kept per endpoint
	// Prefer orders source kinds when several feed the same signal.
	Prefer []SourceKind
}

// DefaultStoreConfig: 1 h of 1 s chart points, 1 h of 10 s histogram slots,
// the last 4096 raw samples per distribution.
func DefaultStoreConfig() StoreConfig {
	return StoreConfig{
		ChartResolution: time.Second,
		ChartSpan:       time.Hour,
		HistResolution:  10 * time.Second,
		MaxWindow:       time.Hour,
		MaxSamples:      4096,
		StaleIntervals:  3,
		MinStaleAfter:   5 * time.Second,
		ProbeHistory:    50,
		Prefer:          []SourceKind{SourceProbe, SourceScrape, SourcePromQL, SourceDCGM, SourceSMI},
	}
}

// SilentAfter is how long a source, track or GPU reporting every interval may
// go without one before it counts as stale: StaleIntervals of them, at
// least MinStaleAfter.
func (c StoreConfig) SilentAfter(interval time.Duration) time.Duration {
	return max(time.Duration(c.StaleIntervals*float64(interval)), c.MinStaleAfter)
}

// Store turns observations into per-endpoint windows and snapshots. It is
// a Sink; it is safe for concurrent use.
type Store struct {
	cfg       StoreConfig
	mu        sync.RWMutex
	endpoints map[string]*endpointState
	sources   map[string]sourceReport
	// bySource is the last report of each source that names its interval,
	// by source id (Observation.Source): its figures turn stale with it.
	bySource map[string]sourceReport
	gpus     map[string]*gpuState // by source|device key
}

type endpointState struct {
	info   Endpoint
	seen   time.Time
	tracks map[trackKey]*track
	probes []ProbeAt // ring of ProbeHistory, oldest overwritten
	next   int
	live   LiveText
	liveAt time.Time
	// The last probe's outcome: an endpoint with probe observations is
	// probed, and its client figures are the probe's even before the
	// first success.
	probeSource string
	probeAt     time.Time
	probeErr    string
	// unpreferred: a track of a source kind outside StoreConfig.Prefer
	// exists (preferred then looks beyond the configured kinds).
	unpreferred bool
}

func (ep *endpointState) probed() bool { return ep.probeSource != "" }

type trackKey struct {
	signal     Signal
	sourceKind SourceKind
}

// ProbeAt is a finished probe with its time.
type ProbeAt struct {
	At time.Time `json:"at"`
	ProbeRecord
}

// NewStore returns an empty store.
func NewStore(cfg StoreConfig) *Store {
	def := DefaultStoreConfig()
	if cfg.ChartResolution <= 0 {
		cfg.ChartResolution = def.ChartResolution
	}
	if cfg.ChartSpan <= 0 {
		cfg.ChartSpan = def.ChartSpan
	}
	if cfg.HistResolution <= 0 {
		cfg.HistResolution = def.HistResolution
	}
	if cfg.MaxWindow <= 0 {
		cfg.MaxWindow = def.MaxWindow
	}
	if cfg.MaxSamples <= 0 {
		cfg.MaxSamples = def.MaxSamples
	}
	if cfg.StaleIntervals <= 0 {
		cfg.StaleIntervals = def.StaleIntervals
	}
	if cfg.MinStaleAfter <= 0 {
		cfg.MinStaleAfter = def.MinStaleAfter
	}
	if cfg.ProbeHistory <= 0 {
		cfg.ProbeHistory = def.ProbeHistory
	}
	if len(cfg.Prefer) == 0 {
		cfg.Prefer = def.Prefer
	}
	return &Store{cfg: cfg, endpoints: map[string]*endpointState{}, sources: map[string]sourceReport{}, bySource: map[string]sourceReport{}, gpus: map[string]*gpuState{}}
}

// Config returns the store's effective configuration.
func (s *Store) Config() StoreConfig { return s.cfg }

// Observe ingests one observation.
func (s *Store) Observe(o Observation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o.Kind == KindSource {
		if o.Status != nil {
			key := o.Status.Name
			if key == "" {
				key = o.Source
			}
			r := sourceReport{status: *o.Status, at: o.At, interval: o.Interval}
			s.sources[key] = r
			if o.Source != "" && o.Interval > 0 {
				s.bySource[o.Source] = r
			} else if o.Source != "" {
				// It promises no cadence now (a probe after its server's
				// failed model listings): its figures keep their own.
				delete(s.bySource, o.Source)
			}
		}
		return
	}
	if o.Kind == KindGPU {
		s.observeGPU(o)
		return
	}
	if o.Kind == KindRetire && o.Endpoint == "" {
		delete(s.sources, o.Source)
		delete(s.bySource, o.Source)
		return
	}
	if o.Endpoint == "" {
		return
	}
	if o.Kind == KindRetire {
		delete(s.endpoints, o.Endpoint)
		delete(s.sources, o.Endpoint)
		return
	}
	ep := s.endpoint(o.Endpoint, o.At)
	if SideOf(SourceKindOf(o.Source)) == Client {
		ep.noteProbe(o)
	}
	switch o.Kind {
	case KindEndpoint:
		if o.Info != nil {
			mergeEndpoint(&ep.info, *o.Info)
		}
	case KindProbe:
		if o.Probe != nil {
			ep.addProbe(ProbeAt{At: o.At, ProbeRecord: *o.Probe}, s.cfg.ProbeHistory)
		}
	case KindLiveText:
		if o.Live != nil {
			ep.live, ep.liveAt = *o.Live, o.At
		}
	case KindFailure:
		if o.Signal != "" {
			s.track(ep, o.Signal, o.Source).observe(o, s.cfg)
			return
		}
		kind := SourceKindOf(o.Source)
		for k, t := range ep.tracks {
			if k.sourceKind == kind {
				t.observe(o, s.cfg)
			}
		}
	default:
		if o.Signal != "" {
			s.track(ep, o.Signal, o.Source).observe(o, s.cfg)
		}
	}
}

func (s *Store) endpoint(name string, at time.Time) *endpointState {
	ep, ok := s.endpoints[name]
	if !ok {
		ep = &endpointState{info: Endpoint{Name: name}, seen: at, tracks: map[trackKey]*track{}}
		s.endpoints[name] = ep
	}
	return ep
}

func (s *Store) track(ep *endpointState, sig Signal, source string) *track {
	k := trackKey{signal: sig, sourceKind: SourceKindOf(source)}
	t, ok := ep.tracks[k]
	if !ok {
		t = s.newTrack(sig, source)
		ep.tracks[k] = t
		ep.unpreferred = ep.unpreferred || !s.preferredKind(k.sourceKind)
	}
	return t
}

func (ep *endpointState) noteProbe(o Observation) {
	ep.probeSource = o.Source
	switch {
	case o.Kind == KindFailure:
		ep.probeAt, ep.probeErr = o.At, o.Err
		if ep.probeErr == "" {
			ep.probeErr = "probe failed"
		}
	case o.Kind == KindSample && o.Signal == ProbeSuccess && o.Value >= 0.5:
		ep.probeAt, ep.probeErr = o.At, ""
	}
}

func (ep *endpointState) addProbe(p ProbeAt, max int) {
	if len(ep.probes) < max {
		ep.probes = append(ep.probes, p)
		return
	}
	ep.probes[ep.next] = p
	ep.next = (ep.next + 1) % max
}

// mergeEndpoint fills what a later announcement knows; a source that knows
// less (no engine) does not erase what another knew.
func mergeEndpoint(dst *Endpoint, src Endpoint) {
	if src.BaseURL != "" {
		dst.BaseURL = src.BaseURL
	}
	if src.Model != "" {
		dst.Model = src.Model
	}
	if src.Engine != "" && (dst.Engine == "" || dst.Engine == EngineUnknown) {
		dst.Engine = src.Engine
	}
	if src.Group != "" {
		dst.Group, dst.Replica = src.Group, src.Replica
	}
	dst.Aggregate = dst.Aggregate || src.Aggregate
	if src.Unmeasurable != nil { // each announcement says all of them
		dst.Unmeasurable = src.Unmeasurable
	}
	if len(src.Labels) == 0 {
		return
	}
	// A new map, never the old one changed: snapshots hand the endpoint out
	// by value, its Labels map with it, and views read it while sources
	// announce (a down target, a restart) under the store's lock.
	labels := maps.Clone(dst.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range src.Labels {
		if v == "" { // as in Prometheus, an empty label is no label: a source takes one back so
			delete(labels, k)
			continue
		}
		labels[k] = v
	}
	if len(labels) == 0 {
		labels = nil
	}
	dst.Labels = labels
}

// EndpointNames returns the known endpoint names, sorted.
func (s *Store) EndpointNames() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.endpoints))
	for n := range s.endpoints {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Probes returns an endpoint's recent finished probes, oldest first.
func (s *Store) Probes(endpoint string) []ProbeAt {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ep, ok := s.endpoints[endpoint]
	if !ok {
		return nil
	}
	out := make([]ProbeAt, 0, len(ep.probes))
	out = append(out, ep.probes[ep.next:]...)
	return append(out, ep.probes[:ep.next]...)
}

// Live returns the text of the endpoint's current or last probe response.
func (s *Store) Live(endpoint string) (LiveText, time.Time) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if ep, ok := s.endpoints[endpoint]; ok {
		return ep.live, ep.liveAt
	}
	return LiveText{}, time.Time{}
}
