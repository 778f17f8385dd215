package expo

import (
	"strings"

	"github.com/ttftop/ttftop/telemetry"
)

// Type is a family's metric type.
type Type uint8

const (
	Untyped Type = iota
	Counter
	Gauge
	Histogram
	Summary
)

func (t Type) String() string {
	switch t {
	case Counter:
		return "counter"
	case Gauge:
		return "gauge"
	case Histogram:
		return "histogram"
	case Summary:
		return "summary"
	}
	return "untyped"
}

// parseType maps a TYPE comment word (text or OpenMetrics; any case, as
// expfmt) to a Type.
func parseType(s string) (Type, bool) {
	switch strings.ToLower(s) {
	case "counter":
		return Counter, true
	case "gauge", "info", "stateset":
		return Gauge, true
	case "histogram", "gaugehistogram", "gauge_histogram":
		return Histogram, true
	case "summary":
		return Summary, true
	case "untyped", "unknown":
		return Untyped, true
	}
	return Untyped, false
}

// Label is one label pair. Values are raw network text: sanitise before
// display.
type Label struct {
	Name, Value string
}

// Series is one labelled series of a family.
type Series struct {
	// Labels are sorted by name and exclude "le" (histogram buckets) and
	// "quantile" (summaries).
	Labels []Label
	// Key identifies the label set within its family.
	Key string
	// Value is a counter, gauge or untyped sample.
	Value float64
	// Buckets are a histogram's cumulative buckets sorted by upper bound.
	Buckets []telemetry.Bucket
	// Sum and Count of a histogram or summary.
	Sum, Count float64
	// Created is the "_created" timestamp (Unix seconds), 0 when unknown.
	Created float64

	hasValue, hasSum, hasCount bool
}

// Label returns the value of label name, or "".
func (s *Series) Label(name string) string {
	for _, l := range s.Labels {
		if l.Name == name {
			return l.Value
		}
	}
	return ""
}

// LabelString renders the labels as {a="b",c="d"} (unsanitised).
func (s *Series) LabelString() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range s.Labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.Name)
		b.WriteString(`="`)
		b.WriteString(l.Value)
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// HasSum reports whether a histogram or summary had a _sum sample.
func (s *Series) HasSum() bool { return s.hasSum }

// Family is all series of one metric name.
type Family struct {
	Name   string
	Type   Type
	Series []*Series
	// Err is the first semantic problem found in the family (duplicate
	// series, bad buckets); the family's values must not be used.
	Err error

	index map[string]*Series // built once the family has many series
}

// smallFamily is the series count up to which lookups scan linearly.
const smallFamily = 8

// find returns the series with key k.
func (f *Family) find(k string) *Series {
	if f.index == nil {
		for _, s := range f.Series {
			if s.Key == k {
				return s
			}
		}
		return nil
	}
	return f.index[k]
}

// findBytes is find for a key being built (no allocation).
func (f *Family) findBytes(k []byte) *Series {
	if f.index == nil {
		for _, s := range f.Series {
			if s.Key == string(k) {
				return s
			}
		}
		return nil
	}
	return f.index[string(k)]
}

// add appends a new series, indexing large families.
func (f *Family) add(s *Series) {
	f.Series = append(f.Series, s)
	switch {
	case f.index != nil:
		f.index[s.Key] = s
	case len(f.Series) > smallFamily:
		f.index = make(map[string]*Series, 2*len(f.Series))
		for _, x := range f.Series {
			f.index[x.Key] = x
		}
	}
}

// Page is one parsed exposition.
type Page struct {
	// Families holds the parsed (wanted) families by name.
	Families map[string]*Family
	// Names lists every family name seen, parsed or skipped, in order.
	Names []string
	// Samples counts sample lines.
	Samples int
}
