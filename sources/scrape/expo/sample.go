package expo

import (
	"math"
	"strings"

	"github.com/ttftop/ttftop/telemetry"
)

// sample parses one sample line: name{labels} value [timestamp] [# exemplar].
func (p *parser) sample(line string) error {
	p.page.Samples++
	name, rest, err := p.readName(line)
	if err != nil {
		return err
	}
	var fs *famState
	var r role
	if name != "" {
		// Resolve first: lines of skipped families cost one lookup and
		// a structural check, not a full parse.
		if fs, r = p.resolve(p.strip(name)); fs.fam == nil {
			if !plausible(rest) {
				return p.errorf("malformed sample line for %s", quote(name))
			}
			return nil
		}
	}
	p.labels = p.labels[:0]
	needSpace := true
	if trimmed := skipBlank(rest); trimmed != "" && trimmed[0] == '{' {
		var quotedName string
		quotedName, rest, err = p.readLabels(trimmed[1:], name == "")
		if err != nil {
			return err
		}
		if name == "" {
			if quotedName == "" {
				return p.errorf("invalid metric name: sample without a name")
			}
			if !validName(quotedName) {
				return p.errorf("invalid metric name %s", quote(quotedName))
			}
			name = quotedName
			if fs, r = p.resolve(p.strip(name)); fs.fam == nil {
				return nil
			}
		}
		needSpace = false
	}
	value, err := p.readValue(rest, needSpace)
	if err != nil {
		return err
	}
	fam := fs.fam
	// Pull out le / quantile, then sort the remaining labels.
	bound := math.NaN()
	hasBound := false
	kept := p.labels[:0]
	for _, l := range p.labels {
		switch {
		case r == roleBucket && l.Name == "le":
			b, perr := parseFloat(l.Value)
			if perr != nil {
				return p.errorf("expected float as value for 'le' label, got %s", quote(l.Value))
			}
			bound, hasBound = b, true
		case r == roleQuantile && l.Name == "quantile":
			if _, perr := parseFloat(l.Value); perr != nil {
				return p.errorf("expected float as value for 'quantile' label, got %s", quote(l.Value))
			}
		default:
			kept = append(kept, l)
		}
	}
	p.labels = kept
	if err := p.sortLabels(); err != nil {
		return err
	}
	s := p.series(fam)
	switch r {
	case roleValue:
		if fam.Type == Histogram {
			fam.fail("sample %s without _bucket, _sum or _count suffix", quote(name))
			return nil
		}
		if s.hasValue {
			fam.fail("duplicate series %s", quote(s.LabelString()))
			return nil
		}
		s.Value, s.hasValue = value, true
	case roleBucket:
		if !hasBound {
			fam.fail("bucket without le label")
			return nil
		}
		if s.Buckets == nil {
			s.Buckets = make([]telemetry.Bucket, 0, 24)
		}
		s.Buckets = append(s.Buckets, telemetry.Bucket{UpperBound: bound, Count: value})
	case roleSum:
		if s.hasSum {
			fam.fail("duplicate _sum for series %s", quote(s.LabelString()))
			return nil
		}
		s.Sum, s.hasSum = value, true
	case roleCount:
		if s.hasCount {
			fam.fail("duplicate _count for series %s", quote(s.LabelString()))
			return nil
		}
		s.Count, s.hasCount = value, true
	case roleCreated:
		s.Created = value
	case roleQuantile:
		// Quantiles of summaries are not used: they cannot be aggregated.
	}
	return nil
}

// plausible is the cheap check of a skipped line after its name: an
// optional {…} then a value.
func plausible(rest string) bool {
	if t := skipBlank(rest); t != "" && t[0] == '{' {
		i := strings.LastIndexByte(t, '}')
		return i > 0 && skipBlank(t[i+1:]) != ""
	}
	return rest != "" && (rest[0] == ' ' || rest[0] == '\t') && skipBlank(rest) != ""
}

// series finds or creates the series of the current labels in fam.
func (p *parser) series(fam *Family) *Series {
	p.key = p.key[:0]
	for _, l := range p.labels {
		p.key = append(p.key, l.Name...)
		p.key = append(p.key, 0xfe)
		p.key = append(p.key, l.Value...)
		p.key = append(p.key, 0xff)
	}
	if p.lastFamily == fam && p.lastSeries != nil && p.lastSeries.Key == string(p.key) {
		return p.lastSeries
	}
	if s := fam.findBytes(p.key); s != nil {
		p.lastFamily, p.lastSeries = fam, s
		return s
	}
	s := &Series{Key: string(p.key)}
	if len(p.labels) > 0 {
		s.Labels = append(make([]Label, 0, len(p.labels)), p.labels...)
	}
	fam.add(s)
	p.lastFamily, p.lastSeries = fam, s
	return s
}

func (p *parser) sortLabels() error {
	ls := p.labels
	for i := 1; i < len(ls); i++ { // insertion sort: label sets are small
		for j := i; j > 0 && ls[j].Name < ls[j-1].Name; j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
	for i := 1; i < len(ls); i++ {
		if ls[i].Name == ls[i-1].Name {
			return p.errorf("duplicate label names for metric: %s", quote(ls[i].Name))
		}
	}
	return nil
}
