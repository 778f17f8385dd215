package expo

import (
	"fmt"
	"math"
	"strings"
)

func (f *Family) fail(format string, args ...any) {
	if f.Err == nil {
		f.Err = &FamilyError{Family: quote(f.Name), Msg: fmt.Sprintf(format, args...)}
	}
}

// finish folds text-format "_created" gauges into their families and
// validates histograms and counters.
func (p *parser) finish() {
	for name, fam := range p.page.Families {
		base, ok := strings.CutSuffix(name, "_created")
		if !ok || fam.Err != nil {
			continue
		}
		for _, target := range []string{base + "_total", base} {
			t := p.page.Families[target]
			if t == nil || t == fam || (t.Type != Counter && t.Type != Histogram && t.Type != Summary) {
				continue
			}
			for _, s := range fam.Series {
				if ts := t.find(s.Key); ts != nil {
					ts.Created = s.Value
				}
			}
		}
	}
	for _, fam := range p.page.Families {
		switch fam.Type {
		case Histogram:
			for _, s := range fam.Series {
				validateHistogram(fam, s)
			}
		case Counter:
			for _, s := range fam.Series {
				if s.hasValue && s.Value < 0 {
					fam.fail("negative counter value %g", s.Value)
				}
			}
		}
	}
}

func validateHistogram(fam *Family, s *Series) {
	if len(s.Buckets) == 0 {
		if s.hasSum || s.hasCount {
			fam.fail("series %s has no buckets", quote(s.LabelString()))
		}
		return
	}
	sortBuckets(s.Buckets)
	for i, b := range s.Buckets {
		if b.Count < 0 {
			fam.fail("negative bucket count %g (le=%g)", b.Count, b.UpperBound)
			return
		}
		if i == 0 {
			continue
		}
		prev := s.Buckets[i-1]
		if b.UpperBound == prev.UpperBound {
			fam.fail("duplicate bucket le=%g in series %s", b.UpperBound, quote(s.LabelString()))
			return
		}
		if b.Count < prev.Count {
			fam.fail("bucket counts not monotonic: le=%g has %g < %g at le=%g", b.UpperBound, b.Count, prev.Count, prev.UpperBound)
			return
		}
	}
	if !math.IsInf(s.Buckets[len(s.Buckets)-1].UpperBound, 1) {
		fam.fail(`missing le="+Inf" bucket in series %s`, quote(s.LabelString()))
		return
	}
	if !s.hasSum {
		fam.fail("missing _sum in series %s", quote(s.LabelString()))
	}
}
