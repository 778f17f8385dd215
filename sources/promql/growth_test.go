//go:build integration

package promql

import (
	"fmt"
	"math"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/telemetry"
)

// scrapeIndexGauge is the gauge a growing page adds: which page (0, 1, …)
// a scrape got, so a test knows the exact page behind any stored sample.
const scrapeIndexGauge = "ttftop_fixture_scrape"

// growingPage serves a metrics page whose counters and histograms grow at
// every scrape: page k has every counter, bucket, _sum and _count sample v
// of the base page as v + k × max(v, 1). Buckets stay cumulative (the
// growth is monotonic in v, and _count equals the +Inf bucket), gauges and
// _created series stay as they are, and every histogram gets traffic.
type growingPage struct {
	lines []pageLine
	mu    sync.Mutex
	next  int
}

type pageLine struct {
	text   string  // the line as is (comments, gauges)
	prefix string  // a growing sample: the text before the value
	suffix string  // and after it (a timestamp)
	value  float64 // its base value
	grows  bool
}

// newGrowingPage parses the base page's TYPE lines to know which samples
// grow.
func newGrowingPage(base string) *growingPage {
	types := map[string]string{}
	p := &growingPage{}
	for _, line := range strings.Split(strings.TrimRight(base, "\n"), "\n") {
		pl := pageLine{text: line}
		if f := strings.Fields(line); len(f) >= 4 && f[0] == "#" && f[1] == "TYPE" {
			types[f[2]] = f[3]
		} else if line != "" && !strings.HasPrefix(line, "#") {
			name := line[:strings.IndexAny(line+" ", "{ ")]
			if growing(name, types) {
				prefix, value, suffix, ok := splitSample(line)
				if v, err := strconv.ParseFloat(value, 64); ok && err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
					pl = pageLine{prefix: prefix, suffix: suffix, value: v, grows: true}
				}
			}
		}
		p.lines = append(p.lines, pl)
	}
	return p
}

// growing reports whether a sample of name belongs to a counter or
// histogram family (never a _created gauge).
func growing(name string, types map[string]string) bool {
	if strings.HasSuffix(name, "_created") {
		return false
	}
	if types[name] == "counter" {
		return true
	}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suf); ok && types[base] == "histogram" {
			return true
		}
	}
	return false
}

// splitSample cuts "name{labels} value [timestamp]" around the value.
func splitSample(line string) (prefix, value, suffix string, ok bool) {
	end := 0
	if i := strings.LastIndexByte(line, '}'); i >= 0 {
		end = i + 1
	} else {
		end = strings.IndexByte(line, ' ')
		if end < 0 {
			return "", "", "", false
		}
	}
	rest := strings.Fields(line[end:])
	if len(rest) == 0 {
		return "", "", "", false
	}
	suffix = ""
	if len(rest) > 1 {
		suffix = " " + strings.Join(rest[1:], " ")
	}
	return line[:end] + " ", rest[0], suffix, true
}

// page renders page k.
func (p *growingPage) page(k int) string {
	var b strings.Builder
	for _, l := range p.lines {
		if !l.grows {
			b.WriteString(l.text)
		} else {
			b.WriteString(l.prefix)
			b.WriteString(strconv.FormatFloat(l.value+float64(k)*math.Max(l.value, 1), 'g', -1, 64))
			b.WriteString(l.suffix)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "# TYPE %s gauge\n%s %d\n", scrapeIndexGauge, scrapeIndexGauge, k)
	return b.String()
}

// ServeHTTP serves the next page.
func (p *growingPage) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	k := p.next
	p.next++
	p.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	if _, err := w.Write([]byte(p.page(k))); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// synthPage writes, for an engine without a real capture in the fixtures,
// a page with the first alias of every signal of its spec (the current
// names), its markers and error counters: generated from the alias table,
// not captured from a server.
func synthPage(s engines.Spec, model string) string {
	var b strings.Builder
	labels := func(extra map[string]string) string {
		m := map[string]string{}
		if l := s.ModelLabel(); l != "" {
			m[l] = model
		}
		for k, v := range extra {
			m[k] = v
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+"="+strconv.Quote(m[k]))
		}
		if len(parts) == 0 {
			return ""
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	withLE := func(match map[string]string, le string) map[string]string {
		m := map[string]string{"le": le}
		for k, v := range match {
			m[k] = v
		}
		return m
	}
	done := map[string]bool{}
	typed := func(name string) bool { return strings.Contains(b.String(), "# TYPE "+name+" ") }
	counter := func(name, labels string, v int) {
		if !typed(name) {
			fmt.Fprintf(&b, "# TYPE %s counter\n%s%s %d\n", name, name, labels, v)
		}
	}
	for _, sig := range signalOrder(s) {
		a := s.Signals[sig][0]
		if done[a.Name+a.Per+fmt.Sprint(a.Match)] {
			continue
		}
		done[a.Name+a.Per+fmt.Sprint(a.Match)] = true
		switch a.Type {
		case engines.Histogram, engines.HistogramSum:
			fmt.Fprintf(&b, "# TYPE %s histogram\n", a.Name)
			for i, le := range []string{"0.005", "0.05", "0.5", "5", "+Inf"} {
				fmt.Fprintf(&b, "%s_bucket%s %d\n", a.Name, labels(withLE(a.Match, le)), []int{1, 3, 6, 8, 10}[i])
			}
			fmt.Fprintf(&b, "%s_sum%s 4.25\n%s_count%s 10\n", a.Name, labels(a.Match), a.Name, labels(a.Match))
		case engines.Counter:
			counter(a.Name, labels(a.Match), 100)
		case engines.CounterRatio, engines.CounterShare:
			// A share reads 30 / (30 + 100), a ratio 30 / 100.
			counter(a.Name, labels(a.Match), 30)
			counter(a.Per, labels(nil), 100)
		case engines.Gauge:
			if !typed(a.Name) {
				fmt.Fprintf(&b, "# TYPE %s gauge\n", a.Name)
			}
			fmt.Fprintf(&b, "%s%s 0.5\n", a.Name, labels(a.Match))
		}
	}
	if len(s.Errors) > 0 {
		ec := s.Errors[0]
		fmt.Fprintf(&b, "# TYPE %s counter\n", ec.Failed)
		if ec.FailedLabel != "" {
			fmt.Fprintf(&b, "%s%s 40\n", ec.Failed, labels(map[string]string{ec.FailedLabel: "stop"}))
			fmt.Fprintf(&b, "%s%s 2\n", ec.Failed, labels(map[string]string{ec.FailedLabel: ec.FailedValues[0]}))
			// A normal finish that a failure value read as a regular
			// expression would match too (LMDeploy's "ResponseType.X":
			// the dot matches any character).
			if look := regexp.MustCompile(`[^A-Za-z0-9_]`).ReplaceAllString(ec.FailedValues[0], "X"); look != ec.FailedValues[0] {
				fmt.Fprintf(&b, "%s%s 20\n", ec.Failed, labels(map[string]string{ec.FailedLabel: look}))
			}
		} else {
			fmt.Fprintf(&b, "%s%s 2\n", ec.Failed, labels(nil))
		}
		for _, n := range []string{ec.All, ec.Succeeded} {
			if n != "" && n != ec.Failed {
				counter(n, labels(nil), 40)
			}
		}
	}
	for _, m := range s.Markers {
		if !typed(m) {
			fmt.Fprintf(&b, "# TYPE %s gauge\n%s%s 1\n", m, m, labels(nil))
		}
	}
	return b.String()
}

// signalsWithData lists the signals with a value or histogram window in
// observations of endpoint ep.
func signalsWithData(obs []telemetry.Observation, ep string) map[telemetry.Signal]bool {
	out := map[telemetry.Signal]bool{}
	for _, o := range obs {
		if o.Endpoint == ep && (o.Kind == telemetry.KindSample || o.Kind == telemetry.KindHistogram) {
			out[o.Signal] = true
		}
	}
	return out
}
