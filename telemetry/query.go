package telemetry

import (
	"math"
	"time"
)

// Series returns n chart points of an endpoint's signal over span, oldest
// first, in display units; NaN where nothing was observed.
func (s *Store) Series(endpoint string, sig Signal, now time.Time, span time.Duration, n int) []float64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ep, ok := s.endpoints[endpoint]
	if !ok {
		return nanSlice(n)
	}
	return seriesOf(s.primaryTrack(ep, sig, now), sig, now, span, n)
}

// ServerSeries is Series of the engine's own figures (scrape, PromQL),
// whatever the client's are.
func (s *Store) ServerSeries(endpoint string, sig Signal, now time.Time, span time.Duration, n int) []float64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ep, ok := s.endpoints[endpoint]
	if !ok {
		return nanSlice(n)
	}
	return seriesOf(s.preferred(ep, sig, Server, now), sig, now, span, n)
}

func seriesOf(t *track, sig Signal, now time.Time, span time.Duration, n int) []float64 {
	if t == nil || t.chart == nil {
		return nanSlice(n)
	}
	pts := t.chart.Points(now, span, n)
	scale := sig.Info().Scale
	for i := range pts {
		pts[i] *= scale
	}
	return pts
}

// Quantile returns the q-quantile of sig over (now−window, now] in base
// units, and how many observations it rests on; NaN when there are none.
func (s *Store) Quantile(endpoint string, sig Signal, q float64, now time.Time, window time.Duration) (float64, float64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.liveTrack(endpoint, sig, now)
	if t == nil {
		return math.NaN(), 0
	}
	from := now.Add(-window)
	if t.samples != nil {
		if vals := t.samples.since(from, now); len(vals) > 0 {
			return SampleQuantile(q, vals), float64(len(vals))
		}
	}
	if t.hist != nil {
		if b, _ := t.hist.window(from, now); len(b) > 0 && b[len(b)-1].Count > 0 {
			return HistogramQuantile(q, b), b[len(b)-1].Count
		}
	}
	return math.NaN(), 0
}

// WindowBuckets returns the distribution of sig over the window as
// cumulative buckets with the given upper bounds (base units, +Inf added),
// for distribution charts such as the ITL histogram.
func (s *Store) WindowBuckets(endpoint string, sig Signal, now time.Time, window time.Duration, bounds []float64) []Bucket {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.liveTrack(endpoint, sig, now)
	if t == nil {
		return nil
	}
	from := now.Add(-window)
	if t.samples != nil {
		if vals := t.samples.since(from, now); len(vals) > 0 {
			out := make([]Bucket, len(bounds)+1)
			for i, b := range bounds {
				out[i].UpperBound = b
			}
			out[len(bounds)].UpperBound = math.Inf(1)
			for _, v := range vals {
				for i := range out {
					if v <= out[i].UpperBound {
						out[i].Count++
					}
				}
			}
			return out
		}
	}
	if t.hist != nil {
		b, _ := t.hist.window(from, now)
		return b
	}
	return nil
}

func (s *Store) liveTrack(endpoint string, sig Signal, now time.Time) *track {
	ep, ok := s.endpoints[endpoint]
	if !ok {
		return nil
	}
	return s.primaryTrack(ep, sig, now)
}

// primaryTrack is the track behind primarySnapshot: a probed endpoint's
// probe track of a client signal (nil before its first success), else the
// preferred server track.
func (s *Store) primaryTrack(ep *endpointState, sig Signal, now time.Time) *track {
	if ep.probed() && ClientSignal(sig) {
		return ep.tracks[trackKey{sig, SourceProbe}]
	}
	return s.preferred(ep, sig, Server, now)
}

func nanSlice(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}
