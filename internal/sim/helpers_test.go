package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// stepModel returns a jitter-free spec whose idle decode step takes about
// step on an H100 SXM at 50% efficiency, with negligible KV traffic, and a
// prefill rate of prefillTPS tokens/s.
func stepModel(name string, step time.Duration, prefillTPS float64) ModelSpec {
	const peak, eff = 3.35e12, 0.5
	return ModelSpec{
		Name: name, Params: step.Seconds() * peak * eff / 2, DtypeBytes: 2, KVBytesPerToken: 1024,
		GPU: "H100 SXM", Efficiency: eff, PrefillTokensPerSec: prefillTPS, MaxBatch: 64, MaxQueue: 64,
	}
}

// newTestServer starts a simulator behind httptest; both are closed at
// the end of the test.
func newTestServer(t *testing.T, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		s.Close()
		ts.Close()
	})
	return s, ts
}

// startServer creates and starts a simulator on its own listeners,
// closed at cleanup.
func startServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// streamResult is what a test client saw on one SSE stream.
type streamResult struct {
	status   int
	start    time.Time
	events   []string    // data payloads, [DONE] included
	times    []time.Time // arrival per event
	ttft     time.Duration
	tokens   int // content-bearing chunks (incl. EOS/finish chunk)
	finish   string
	usage    map[string]int
	errorMsg string
}

// streamRequest posts body and reads the SSE stream to its end. It
// reports problems with Errorf (not Fatal) so it can run in goroutines.
func streamRequest(t *testing.T, ctx context.Context, url, path, body string) streamResult {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res := streamResult{start: time.Now()}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			t.Errorf("POST %s: %v", path, err)
		}
		return res
	}
	defer resp.Body.Close()
	res.status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		res.errorMsg = string(b)
		return res
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		data := strings.TrimPrefix(line, "data: ")
		now := time.Now()
		res.events = append(res.events, data)
		res.times = append(res.times, now)
		if data == "[DONE]" {
			break
		}
		var c struct {
			Choices []struct {
				Delta *struct {
					Role    *string `json:"role"`
					Content *string `json:"content"`
				} `json:"delta"`
				Text         *string `json:"text"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage map[string]int `json:"usage"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Errorf("bad chunk %q: %v", data, err)
			return res
		}
		if c.Error != nil {
			res.errorMsg = c.Error.Message
			continue
		}
		if c.Usage != nil {
			res.usage = c.Usage
		}
		for _, ch := range c.Choices {
			if ch.Delta != nil && ch.Delta.Role != nil {
				continue // role-only chunk
			}
			res.tokens++
			if res.tokens == 1 {
				res.ttft = now.Sub(res.start)
			}
			if ch.FinishReason != nil {
				res.finish = *ch.FinishReason
			}
		}
	}
	return res
}

// tpot is the client-side median gap between token chunks: the median
// shrugs off the odd stall when a noisy machine delays this process.
func (r streamResult) tpot() time.Duration {
	var gaps []time.Duration
	var prev time.Time
	for i, e := range r.events {
		if e == "[DONE]" || strings.Contains(e, `"role"`) || strings.Contains(e, `"choices":[]`) {
			continue
		}
		if !prev.IsZero() {
			gaps = append(gaps, r.times[i].Sub(prev))
		}
		prev = r.times[i]
	}
	if len(gaps) == 0 {
		return 0
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}

// retry runs a timing-sensitive check up to 3 times and fails only if
// every attempt failed: a shared 2-core machine can stall any single run.
func retry(t *testing.T, check func() error) {
	t.Helper()
	var errs []error
	for i := 0; i < 3; i++ {
		err := check()
		if err == nil {
			return
		}
		errs = append(errs, err)
	}
	t.Error(errors.Join(errs...))
}

// postJSON posts body; like streamRequest it is goroutine-safe.
func postJSON(t *testing.T, url, path, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Errorf("POST %s: %v", path, err)
		return &http.Response{}, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func parseMetrics(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("expfmt: %v\n%s", err, body)
	}
	return fams
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return parseMetrics(t, b)
}

// metricValue finds a sample by family and label subset.
func metricValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("family %s missing", name)
	}
next:
	for _, m := range f.Metric {
		for k, v := range labels {
			found := false
			for _, lp := range m.Label {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m
	}
	t.Fatalf("%s%v not found", name, labels)
	return nil
}

// eventually polls cond for up to d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func within(got, want, tol time.Duration) bool {
	d := got - want
	return d >= -tol && d <= tol
}
