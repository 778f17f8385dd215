package promtest

import (
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// Sample is one series of an instant-query result.
type Sample struct {
	Metric map[string]string
	Value  float64
}

// Query runs an instant query at time at (zero: now) and returns its
// vector; it fails the test on errors.
func (s *Server) Query(t testing.TB, query string, at time.Time) []Sample {
	t.Helper()
	q := url.Values{"query": {query}}
	if !at.IsZero() {
		q.Set("time", strconv.FormatFloat(float64(at.UnixNano())/1e9, 'f', -1, 64))
	}
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := s.get("/api/v1/query?"+q.Encode(), &body); err != nil {
		t.Fatalf("promtest: query %s: %v (%s)", query, err, body.Error)
	}
	if body.Data.ResultType != "vector" {
		t.Fatalf("promtest: query %s returned %q, want a vector", query, body.Data.ResultType)
	}
	out := make([]Sample, 0, len(body.Data.Result))
	for _, r := range body.Data.Result {
		str, ok := r.Value[1].(string)
		if !ok {
			t.Fatalf("promtest: query %s: value %v is not a string", query, r.Value[1])
		}
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			t.Fatalf("promtest: query %s: %v", query, err)
		}
		out = append(out, Sample{Metric: r.Metric, Value: v})
	}
	return out
}

// ScrapeTime returns the timestamp of the newest sample of series at or
// before at: when the scrape that Prometheus holds for that time started.
func (s *Server) ScrapeTime(t testing.TB, series string, at time.Time) time.Time {
	t.Helper()
	res := s.Query(t, fmt.Sprintf("timestamp(%s)", series), at)
	if len(res) != 1 {
		t.Fatalf("promtest: %d series for %s at %s, want 1", len(res), series, at)
	}
	sec := res[0].Value
	return time.Unix(0, int64(sec*1e9))
}

// SampleTimes returns the timestamps of the raw samples of series in
// (at−window, at]: the scrapes Prometheus ingested.
func (s *Server) SampleTimes(t testing.TB, series string, at time.Time, window time.Duration) []time.Time {
	t.Helper()
	var out []time.Time
	for _, p := range s.Samples(t, series, at, window) {
		out = append(out, p.At)
	}
	return out
}

// Point is one raw sample.
type Point struct {
	At    time.Time
	Value float64
}

// Samples returns the raw samples of series in (at−window, at], of every
// series it selects, in the order the server gives them.
func (s *Server) Samples(t testing.TB, series string, at time.Time, window time.Duration) []Point {
	t.Helper()
	q := url.Values{
		"query": {fmt.Sprintf("%s[%dms]", series, window.Milliseconds())},
		"time":  {strconv.FormatFloat(float64(at.UnixNano())/1e9, 'f', -1, 64)},
	}
	var body struct {
		Error string `json:"error"`
		Data  struct {
			Result []struct {
				Values [][2]any `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := s.get("/api/v1/query?"+q.Encode(), &body); err != nil {
		t.Fatalf("promtest: samples of %s: %v (%s)", series, err, body.Error)
	}
	var out []Point
	for _, r := range body.Data.Result {
		for _, v := range r.Values {
			sec, ok := v[0].(float64)
			str, isStr := v[1].(string)
			if !ok || !isStr {
				t.Fatalf("promtest: samples of %s: sample %v", series, v)
			}
			x, err := strconv.ParseFloat(str, 64)
			if err != nil {
				t.Fatalf("promtest: samples of %s: %v", series, err)
			}
			out = append(out, Point{At: time.UnixMilli(int64(sec*1000 + 0.5)), Value: x})
		}
	}
	return out
}

// FailedScrapes returns when the scrapes of job in (at−window, at] failed
// (up == 0). After one, Prometheus marks the target's series stale until
// the next scrape that succeeds.
func (s *Server) FailedScrapes(t testing.TB, job string, at time.Time, window time.Duration) []time.Time {
	t.Helper()
	var out []time.Time
	for _, p := range s.Samples(t, fmt.Sprintf("up{job=%q}", job), at, window) {
		if p.Value == 0 {
			out = append(out, p.At)
		}
	}
	return out
}
