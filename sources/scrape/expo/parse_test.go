package expo

import (
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
)

func TestParseSyntaxErrors(t *testing.T) {
	for name, body := range map[string]string{
		"empty braces":      "{} 3.14\n",
		"lone brace":        "{\n",
		"bad escape":        "a{b=\"c\\x\"} 1\n",
		"no value":          "a{b=\"c\"}\n",
		"bad value":         "a 1_000\n",
		"hex value":         "a 0x1p3\n",
		"unterminated":      "a{b=\"c} 1\n",
		"no equals":         "a{b \"c\"} 1\n",
		"bad le":            "# TYPE h histogram\nh_bucket{le=\"x\"} 1\n",
		"dup label":         "a{b=\"1\",b=\"2\"} 1\n",
		"reserved":          "a{__name__=\"x\"} 1\n",
		"trailing garbage":  "a 1 2 3\n",
		"last line no \\n":  "a 1\nb 2",
		"unknown type":      "# TYPE a bogus\n",
		"second type":       "# TYPE a gauge\n# TYPE a counter\n",
		"bad name":          "1a 1\n",
		"html":              "<html><body>502 Bad Gateway</body></html>\n",
		"openmetrics noeof": "",
	} {
		t.Run(name, func(t *testing.T) {
			opt := Options{OpenMetrics: name == "openmetrics noeof"}
			page, err := Parse(body, opt)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("want *ParseError, got %v", err)
			}
			if page == nil {
				t.Fatal("nil page")
			}
		})
	}
}

func TestFamilyErrors(t *testing.T) {
	const hdr = "# TYPE h histogram\n"
	for name, tc := range map[string]struct{ body, want string }{
		"duplicate gauge":    {"# TYPE g gauge\ng{a=\"1\"} 1\ng{a=\"1\"} 2\n", "duplicate series"},
		"duplicate le":       {hdr + "h_bucket{le=\"5\"} 1\nh_bucket{le=\"5.0\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n", "duplicate bucket"},
		"non-monotonic":      {hdr + "h_bucket{le=\"1\"} 5\nh_bucket{le=\"2\"} 3\nh_bucket{le=\"+Inf\"} 5\nh_sum 1\nh_count 5\n", "not monotonic"},
		"missing +Inf":       {hdr + "h_bucket{le=\"1\"} 5\nh_sum 1\nh_count 5\n", "+Inf"},
		"missing sum":        {hdr + "h_bucket{le=\"1\"} 5\nh_bucket{le=\"+Inf\"} 5\nh_count 5\n", "_sum"},
		"negative counter":   {"# TYPE c counter\nc -1\n", "negative"},
		"duplicate count":    {hdr + "h_bucket{le=\"+Inf\"} 5\nh_sum 1\nh_count 5\nh_count 5\n", "duplicate _count"},
		"bare histogram":     {hdr + "h 1\n", "suffix"},
		"negative bucket":    {hdr + "h_bucket{le=\"1\"} -1\nh_bucket{le=\"+Inf\"} 5\nh_sum 1\n", "negative"},
		"buckets no le":      {hdr + "h_bucket{a=\"b\"} 1\n", "without le"},
		"escape in dup name": {"# TYPE g gauge\ng{a=\"\x1b]0;x\x07\"} 1\ng{a=\"\x1b]0;x\x07\"} 1\n", `\x1b`},
	} {
		t.Run(name, func(t *testing.T) {
			page, err := Parse(tc.body, Options{})
			if err != nil {
				t.Fatalf("page error: %v", err)
			}
			var fe *FamilyError
			for _, f := range page.Families {
				if f.Err != nil && errors.As(f.Err, &fe) {
					break
				}
			}
			if fe == nil || !strings.Contains(fe.Error(), tc.want) {
				t.Fatalf("want family error containing %q, got %v", tc.want, fe)
			}
			if strings.ContainsAny(fe.Error(), "\x1b\x07") {
				t.Fatalf("unsanitised error %q", fe.Error())
			}
		})
	}
}

func TestUnsortedBucketsAreSorted(t *testing.T) {
	page, err := Parse("# TYPE h histogram\nh_sum 3\nh_bucket{le=\"+Inf\"} 4\nh_bucket{le=\"0.5\"} 1\nh_bucket{le=\"1\"} 3\nh_count 4\n", Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := page.Families["h"]
	if f.Err != nil {
		t.Fatal(f.Err)
	}
	b := f.Series[0].Buckets
	if len(b) != 3 || b[0].UpperBound != 0.5 || b[1].Count != 3 || !math.IsInf(b[2].UpperBound, 1) {
		t.Fatalf("buckets %+v", b)
	}
}

func TestEscapesAndQuotedNames(t *testing.T) {
	body := "# TYPE \"vllm:x\" histogram\n" +
		"{\"vllm:x_bucket\",le=\"5.0\",model_name=\"a\\\"b\\\\c\\nd\"} 2\n" +
		"{\"vllm:x_bucket\",model_name=\"a\\\"b\\\\c\\nd\",le=\"+Inf\"} 3\n" +
		"{\"vllm:x_sum\",model_name=\"a\\\"b\\\\c\\nd\"} 7\n" +
		"g{v=\"\x1b[2J\"} NaN\n"
	page, err := Parse(body, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := page.Families["vllm:x"]
	if f == nil || f.Err != nil || len(f.Series) != 1 {
		t.Fatalf("family %+v", f)
	}
	if got := f.Series[0].Label("model_name"); got != "a\"b\\c\nd" {
		t.Fatalf("unescaped %q", got)
	}
	g := page.Families["g"].Series[0]
	if !math.IsNaN(g.Value) || g.Label("v") != "\x1b[2J" {
		t.Fatalf("raw label value must be kept for the caller to sanitise: %+v", g)
	}
}

func TestWantAndStripPrefix(t *testing.T) {
	body := "# TYPE kserve_vllm:a gauge\nkserve_vllm:a 1\n# TYPE other gauge\nother 2\n"
	page, err := Parse(body, Options{StripPrefix: "kserve_", Want: func(n string) bool { return n == "vllm:a" }})
	if err != nil {
		t.Fatal(err)
	}
	if page.Families["vllm:a"] == nil || page.Families["other"] != nil {
		t.Fatalf("families %v", page.Families)
	}
	if strings.Join(page.Names, ",") != "vllm:a,other" {
		t.Fatalf("names %v", page.Names)
	}
	// Lines of skipped families get a structural check only.
	none := Options{Want: func(string) bool { return false }}
	for _, bad := range []string{"garbage{\n", "garbage{a=\"b\"}\n", "garbage\n", "<html>\n"} {
		if _, err := Parse(bad, none); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := Parse("skipped{a=\"}\"} 1\nskipped 2 1700000000\n", none); err != nil {
		t.Errorf("valid skipped lines rejected: %v", err)
	}
}

func TestCreatedFolding(t *testing.T) {
	page, err := Parse(readFixture(t, "vllm-v0.10-metrics.txt")+"\n", Options{})
	if err != nil {
		t.Fatal(err)
	}
	ttft := page.Families["vllm:time_to_first_token_seconds"].Series[0]
	if ttft.Created != 1.771042457421546e+09 {
		t.Errorf("histogram created %v", ttft.Created)
	}
	gen := page.Families["vllm:generation_tokens_total"].Series[0]
	if gen.Created != 1.7710424574209504e+09 || gen.Value != 1739 {
		t.Errorf("counter %+v", gen)
	}
}

// The same data in OpenMetrics and text must parse to the same values.
func TestOpenMetricsEquivalent(t *testing.T) {
	om := `# TYPE vllm:generation_tokens counter
# HELP vllm:generation_tokens Number of generation tokens processed.
vllm:generation_tokens_total{model_name="m"} 10.0
vllm:generation_tokens_created{model_name="m"} 1.7e+09
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.1",model_name="m"} 1.0 # {trace_id="abc"} 0.05 1.7e+09
vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="m"} 2.0
vllm:time_to_first_token_seconds_count{model_name="m"} 2.0
vllm:time_to_first_token_seconds_sum{model_name="m"} 0.6
vllm:time_to_first_token_seconds_created{model_name="m"} 1.7e+09
# TYPE vllm:cache_config info
vllm:cache_config_info{block_size="16",num_gpu_blocks="100"} 1.0
# EOF
`
	page, err := Parse(om, Options{OpenMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	c := page.Families["vllm:generation_tokens_total"]
	if c == nil || c.Type != Counter || c.Series[0].Value != 10 || c.Series[0].Created != 1.7e9 {
		t.Fatalf("counter %+v", c)
	}
	h := page.Families["vllm:time_to_first_token_seconds"]
	if h == nil || h.Err != nil || len(h.Series[0].Buckets) != 2 || h.Series[0].Sum != 0.6 || h.Series[0].Created != 1.7e9 {
		t.Fatalf("histogram %+v", h)
	}
	if i := page.Families["vllm:cache_config_info"]; i == nil || i.Series[0].Label("num_gpu_blocks") != "100" {
		t.Fatalf("info %+v", i)
	}
	if _, err := Parse(om+"x 1\n", Options{OpenMetrics: true}); err == nil {
		t.Fatal("data after # EOF accepted")
	}
}

func TestPanicBecomesError(t *testing.T) {
	_, err := Parse("a 1\n", Options{Want: func(string) bool { panic("boom") }})
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("got %v", err)
	}
}

func TestFormatOf(t *testing.T) {
	for ct, want := range map[string]struct {
		om, warn, err bool
	}{
		"text/plain; version=0.0.4; charset=utf-8":                   {},
		"text/plain; version=1.0.0; escaping=allow-utf-8":            {},
		"application/openmetrics-text; version=1.0.0; charset=utf-8": {om: true},
		"application/openmetrics-text; version=0.0.1":                {om: true},
		"":                         {warn: true},
		"application/json":         {err: true},
		"text/html; charset=utf-8": {err: true},
		"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited": {err: true},
		"application/x-weird": {warn: true},
	} {
		h := http.Header{}
		if ct != "" {
			h.Set("Content-Type", ct)
		}
		om, warn, err := FormatOf(h)
		if om != want.om || (warn != "") != want.warn || (err != nil) != want.err {
			t.Errorf("%q: om=%v warn=%q err=%v", ct, om, warn, err)
		}
	}
}
