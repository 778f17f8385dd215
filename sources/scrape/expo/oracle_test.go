package expo

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// expfmtParse parses with the reference parser, turning a panic into an
// error: expfmt versions before v0.69 panic on a line starting with "{".
func expfmtParse(body string) (fams map[string]*dto.MetricFamily, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(strings.NewReader(body))
}

func labelKey(ls []*dto.LabelPair, typ dto.MetricType) string {
	var parts []string
	for _, l := range ls {
		if (l.GetName() == "le" && typ == dto.MetricType_HISTOGRAM) || (l.GetName() == "quantile" && typ == dto.MetricType_SUMMARY) {
			continue
		}
		parts = append(parts, l.GetName()+"\xfe"+l.GetValue()+"\xff")
	}
	sort.Strings(parts)
	return strings.Join(parts, "")
}

func myKey(ls []Label) string {
	var parts []string
	for _, l := range ls {
		parts = append(parts, l.Name+"\xfe"+l.Value+"\xff")
	}
	sort.Strings(parts)
	return strings.Join(parts, "")
}

func same(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

// compareWithExpfmt checks that every family expfmt found is in page with
// the same type, series and values. Families with a FamilyError are only
// checked for presence.
func compareWithExpfmt(t testing.TB, ref map[string]*dto.MetricFamily, page *Page) {
	t.Helper()
	for name, rf := range ref {
		if len(rf.GetMetric()) == 0 {
			continue
		}
		f := page.Families[name]
		if f == nil {
			t.Errorf("family %q missing", name)
			continue
		}
		if f.Err != nil {
			continue
		}
		want := map[dto.MetricType]Type{dto.MetricType_COUNTER: Counter, dto.MetricType_GAUGE: Gauge,
			dto.MetricType_HISTOGRAM: Histogram, dto.MetricType_SUMMARY: Summary, dto.MetricType_UNTYPED: Untyped,
			dto.MetricType_GAUGE_HISTOGRAM: Histogram}[rf.GetType()]
		if f.Type != want {
			t.Errorf("family %q type %v, expfmt %v", name, f.Type, rf.GetType())
		}
		mine := map[string]*Series{}
		for _, s := range f.Series {
			mine[myKey(s.Labels)] = s
		}
		if rf.GetType() != dto.MetricType_HISTOGRAM && rf.GetType() != dto.MetricType_SUMMARY && len(mine) != len(rf.GetMetric()) {
			t.Errorf("family %q: %d series, expfmt %d", name, len(mine), len(rf.GetMetric()))
		}
		for _, m := range rf.GetMetric() {
			s := mine[labelKey(m.GetLabel(), rf.GetType())]
			if s == nil {
				t.Errorf("family %q: series %v missing", name, m.GetLabel())
				continue
			}
			switch rf.GetType() {
			case dto.MetricType_COUNTER:
				if !same(s.Value, m.GetCounter().GetValue()) {
					t.Errorf("%s%s = %v, expfmt %v", name, s.LabelString(), s.Value, m.GetCounter().GetValue())
				}
			case dto.MetricType_GAUGE:
				if !same(s.Value, m.GetGauge().GetValue()) {
					t.Errorf("%s%s = %v, expfmt %v", name, s.LabelString(), s.Value, m.GetGauge().GetValue())
				}
			case dto.MetricType_UNTYPED:
				if !same(s.Value, m.GetUntyped().GetValue()) {
					t.Errorf("%s%s = %v, expfmt %v", name, s.LabelString(), s.Value, m.GetUntyped().GetValue())
				}
			case dto.MetricType_SUMMARY:
				if !same(s.Sum, m.GetSummary().GetSampleSum()) {
					t.Errorf("%s sum %v, expfmt %v", name, s.Sum, m.GetSummary().GetSampleSum())
				}
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				if !same(s.Sum, h.GetSampleSum()) {
					t.Errorf("%s sum %v, expfmt %v", name, s.Sum, h.GetSampleSum())
				}
				count := float64(h.GetSampleCount())
				if h.SampleCountFloat != nil {
					count = h.GetSampleCountFloat()
				}
				if !same(s.Count, count) {
					t.Errorf("%s count %v, expfmt %v", name, s.Count, count)
				}
				rb := append([]*dto.Bucket(nil), h.GetBucket()...)
				sort.SliceStable(rb, func(i, j int) bool { return rb[i].GetUpperBound() < rb[j].GetUpperBound() })
				if len(rb) != len(s.Buckets) {
					t.Errorf("%s: %d buckets, expfmt %d", name, len(s.Buckets), len(rb))
					continue
				}
				for i, b := range rb {
					c := float64(b.GetCumulativeCount())
					if b.CumulativeCountFloat != nil {
						c = b.GetCumulativeCountFloat()
					}
					if s.Buckets[i].UpperBound != b.GetUpperBound() || !same(s.Buckets[i].Count, c) {
						t.Errorf("%s bucket %d = %+v, expfmt le=%v count=%v", name, i, s.Buckets[i], b.GetUpperBound(), c)
					}
				}
			}
		}
	}
}

func TestFixturesMatchExpfmt(t *testing.T) {
	for _, name := range fixtureNames() {
		t.Run(name, func(t *testing.T) {
			body := readFixture(t, name)
			if !strings.HasSuffix(body, "\n") {
				// vllm-v0.10 was saved without its final newline: both
				// parsers must report it, then parse the completed body.
				_, refErr := expfmtParse(body)
				_, err := Parse(body, Options{})
				if refErr == nil || err == nil || !strings.Contains(err.Error(), "unexpected end of input stream") {
					t.Fatalf("unterminated body: expfmt err %v, ours %v", refErr, err)
				}
				body += "\n"
			}
			ref, err := expfmtParse(body)
			if err != nil {
				t.Fatalf("expfmt: %v", err)
			}
			page, err := Parse(body, Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			compareWithExpfmt(t, ref, page)
			for n, f := range page.Families {
				if f.Err != nil {
					t.Errorf("family %s: unexpected error %v", n, f.Err)
				}
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	// The fixtures are seeds for "go test" runs; long fuzzing sessions
	// with 50 KB seeds crawl, so TTFTOP_FUZZ_SMALL=1 leaves them out.
	if os.Getenv("TTFTOP_FUZZ_SMALL") == "" {
		for _, name := range fixtureNames() {
			f.Add(readFixture(f, name))
		}
	}
	for _, s := range []string{
		"{} 3.14\n", "{", "a{b=\"c\\x\"} 1\n", "a 1 2 3\n", "# TYPE a histogram\na_bucket{le=\"x\"} 1\n",
		"# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
		"{\"a.b\",c=\"d\"} 1\n", "a{b=\"\x1b]0;x\x07\"} NaN\n", "a +Inf\n", "a 1_0\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		page, err := Parse(body, Options{})
		if page == nil {
			t.Fatal("nil page")
		}
		ref, refErr := expfmtParse(body)
		if refErr == nil && err != nil {
			t.Fatalf("expfmt accepts, Parse fails: %v", err)
		}
		if refErr == nil {
			compareWithExpfmt(t, ref, page)
		}
		_, _ = Parse(body, Options{OpenMetrics: true})
	})
}
