package record

import (
	"slices"

	"github.com/ttftop/ttftop/telemetry"
)

// maxStateKeys bounds the preamble kept for seeking; keys past it (endless
// new endpoints) are not repeated, so only a seek far past their last
// observation misses them.
const maxStateKeys = 50_000

// stateLines keeps, per key, the encoded line of the latest observation a
// reader starting at a later segment needs: endpoint announcements, source
// statuses and each track's last value and last status. Replayed in their
// original order they leave a store in the state the full replay would
// (for everything older than the replayed span).
//
// It keeps alert transitions the same way: the latest of every alert, and
// the last resolvedMax resolved ones. An alert's state is its latest
// transition and the history is the last resolved ones, so replaying that
// subset in order rebuilds both as replaying every transition would.
type stateLines struct {
	m           map[stateKey]*stateEntry
	seq         uint64
	resolved    []*stateEntry // oldest first, at most resolvedMax
	resolvedMax int
}

type stateKey struct {
	role     byte // 'e' endpoint, 's' source, 'v' track value, 'f' track status, 'a' alert, 'g' GPU device
	endpoint string
	signal   telemetry.Signal
	source   string // full source for 'e' and 's', source kind for tracks, objective and severity for alerts
}

type stateEntry struct {
	line []byte
	seq  uint64
}

func (s *stateLines) update(o telemetry.Observation, encoded []byte) {
	var k stateKey
	switch o.Kind {
	case telemetry.KindEndpoint:
		k = stateKey{role: 'e', endpoint: o.Endpoint, source: o.Source}
	case telemetry.KindSource:
		name := o.Source
		if o.Status != nil && o.Status.Name != "" {
			name = o.Status.Name
		}
		k = stateKey{role: 's', source: name}
	case telemetry.KindGPU:
		if o.GPU == nil {
			return
		}
		k = stateKey{role: 'g', source: o.Source + "|" + o.GPU.Key}
	case telemetry.KindSample, telemetry.KindHistogram:
		if o.Signal == "" {
			return
		}
		k = stateKey{role: 'v', endpoint: o.Endpoint, signal: o.Signal, source: string(telemetry.SourceKindOf(o.Source))}
	case telemetry.KindNoData, telemetry.KindFailure:
		k = stateKey{role: 'f', endpoint: o.Endpoint, signal: o.Signal, source: string(telemetry.SourceKindOf(o.Source))}
	default:
		return // probes, live text: history, not state
	}
	s.seq++
	s.keep(k, encoded)
}

// keep stores encoded as k's latest line, at the current seq.
func (s *stateLines) keep(k stateKey, encoded []byte) {
	if s.m == nil {
		s.m = map[stateKey]*stateEntry{}
	}
	e, ok := s.m[k]
	if !ok {
		if len(s.m) >= maxStateKeys {
			return
		}
		e = &stateEntry{}
		s.m[k] = e
	}
	e.line = append(e.line[:0], encoded...)
	e.seq = s.seq
}

// updateAlert keeps an alert transition's line: as its alert's latest,
// and among the last resolved ones when it resolves.
func (s *stateLines) updateAlert(objective, endpoint, severity string, resolved bool, encoded []byte) {
	s.seq++
	s.keep(stateKey{role: 'a', endpoint: endpoint, source: objective + "\x00" + severity}, encoded)
	if !resolved {
		return
	}
	limit := max(s.resolvedMax, 1)
	var e *stateEntry
	if len(s.resolved) >= limit {
		e = s.resolved[0] // reuse the oldest's buffer
		s.resolved = append(s.resolved[:0], s.resolved[1:]...)
	} else {
		e = &stateEntry{}
	}
	e.line = append(e.line[:0], encoded...)
	e.seq = s.seq
	s.resolved = append(s.resolved, e)
}

// lines returns the kept lines in the order they were observed, each once.
func (s *stateLines) lines() [][]byte {
	es := make([]*stateEntry, 0, len(s.m)+len(s.resolved))
	for _, e := range s.m {
		es = append(es, e)
	}
	for _, e := range s.resolved {
		if e.seq != 0 {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(a, b *stateEntry) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	out := make([][]byte, 0, len(es))
	for i, e := range es {
		if i > 0 && e.seq == es[i-1].seq {
			continue // the latest of its alert and a resolved one: the same line
		}
		out = append(out, e.line)
	}
	return out
}
