//go:build integration

package promtest

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestConfig(t *testing.T) {
	got, err := config([]Target{{URL: "http://127.0.0.1:1234/prometheus/metrics", Labels: map[string]string{"namespace": "a"}}, {Job: "sim", URL: "http://127.0.0.1:99"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"scrape_interval: 1s", `job_name: "target0"`, `metrics_path: "/prometheus/metrics"`, `targets: ["127.0.0.1:1234"]`,
		`namespace: "a"`, `job_name: "sim"`, `metrics_path: "/metrics"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("config lacks %q:\n%s", want, got)
		}
	}
	if _, err := config([]Target{{URL: "not a url"}}); err == nil {
		t.Error("bad target accepted")
	}
}

func TestStartScrapesTarget(t *testing.T) {
	var n atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		if _, err := fmt.Fprintf(w, "# TYPE promtest_hits counter\npromtest_hits_total %d\n", n.Add(1)); err != nil {
			t.Errorf("writing metrics: %v", err)
		}
	}))
	defer target.Close()
	start := time.Now()
	p := Start(t, Target{URL: target.URL + "/metrics"})
	p.WaitTargetsUp(t, 30*time.Second)
	p.WaitForSeries(t, "promtest_hits_total", 1, 30*time.Second)
	t.Logf("prometheus ready and scraping after %s", time.Since(start).Round(time.Millisecond))
}

// WaitHolds returns only once the store holds a sample at or after the
// time asked, on both stores (VictoriaMetrics behind its 30 s latency
// offset, asked for raw samples rather than timestamp()).
func TestWaitHoldsASampleAtTheTime(t *testing.T) {
	t.Parallel()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		if _, err := fmt.Fprint(w, "# TYPE promtest_up gauge\npromtest_up 1\n"); err != nil {
			t.Errorf("writing metrics: %v", err)
		}
	}))
	defer target.Close()
	for name, start := range map[string]func(testing.TB, ...Target) *Server{"prometheus": Start, "victoria-metrics": StartVictoriaMetrics} {
		t.Run(name, func(t *testing.T) {
			store := start(t, Target{URL: target.URL + "/metrics"})
			store.WaitTargetsUp(t, 30*time.Second)
			at := time.Now().Add(2 * time.Second)
			store.WaitHolds(t, "promtest_up", at, 90*time.Second)
			if got := store.Samples(t, "promtest_up", time.Now(), time.Minute); len(got) == 0 || got[len(got)-1].At.Before(at) {
				t.Errorf("after WaitHolds(%s) the newest sample is %v", at.Format("15:04:05.000"), got)
			}
		})
	}
}

func TestSkipsWithoutBinary(t *testing.T) {
	t.Setenv(BinaryEnv, "/nonexistent/prometheus")
	if b := Binary(); b != "" {
		t.Fatalf("Binary() = %q with a missing %s", b, BinaryEnv)
	}
	var inner *testing.T
	t.Run("start", func(t *testing.T) {
		inner = t
		Start(t)
		t.Error("Start returned without a binary")
	})
	if !inner.Skipped() {
		t.Error("Start did not skip")
	}
}

func TestScrapeConfigForVictoriaMetrics(t *testing.T) {
	got, err := scrapeConfig([]Target{{Job: "sim", URL: "http://127.0.0.1:99/metrics"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "evaluation_interval") || !strings.Contains(got, "scrape_interval: 1s") || !strings.Contains(got, `job_name: "sim"`) {
		t.Errorf("VictoriaMetrics scrape config:\n%s", got)
	}
}

func TestStartVictoriaMetricsScrapesAndKill(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		if _, err := fmt.Fprint(w, "# TYPE promtest_up gauge\npromtest_up 1\n"); err != nil {
			t.Errorf("writing metrics: %v", err)
		}
	}))
	defer target.Close()
	vm := StartVictoriaMetrics(t, Target{URL: target.URL + "/metrics"})
	vm.WaitTargetsUp(t, 30*time.Second)
	vm.Kill(t)
	if resp, err := vm.client.Get(vm.URL + "/-/ready"); err == nil {
		t.Errorf("victoria-metrics still answers after Kill (close: %v)", resp.Body.Close())
	}
}

// The unlagged VictoriaMetrics runs with -search.latencyOffset=0s; the
// default one leaves the flag unset (its /flags page lists only the flags
// set), so at its 30 s.
func TestVictoriaMetricsLatencyOffsetFlag(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		start func(testing.TB, ...Target) *Server
		want  string // "": the flag unset
	}{"default": {StartVictoriaMetrics, ""}, "unlagged": {StartVictoriaMetricsUnlagged, `-search.latencyOffset="0s"`}} {
		t.Run(name, func(t *testing.T) {
			vm := c.start(t)
			resp, err := vm.client.Get(vm.URL + "/flags")
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			if err = errors.Join(err, resp.Body.Close()); err != nil {
				t.Fatal(err)
			}
			set := strings.Contains(string(body), "-search.latencyOffset=")
			if c.want == "" && set || c.want != "" && !strings.Contains(string(body), c.want) {
				t.Errorf("flags, want %q (empty: unset):\n%s", c.want, body)
			}
		})
	}
}

// A test's temporary directory keeps & from the test's name, which
// Prometheus' JSON flags escape as \u0026: the path must be decoded to be
// recognised, and a path that only starts like ours is another server's.
func TestFlagsNameData(t *testing.T) {
	const data = "/tmp/TestA&B123/001/data-7"
	prom := []byte(`{"status":"success","data":{"storage.tsdb.path":"/tmp/TestA\u0026B123/001/data-7","web.listen-address":"127.0.0.1:9"}}`)
	if own, err := flagsNameData("prometheus", prom, data); err != nil || !own {
		t.Errorf("Prometheus naming our directory, & escaped: %v %v, want ours", own, err)
	}
	other := []byte(`{"status":"success","data":{"storage.tsdb.path":"/tmp/TestA\u0026B123/001/data-71"}}`)
	if own, err := flagsNameData("prometheus", other, data); err != nil || own {
		t.Errorf("Prometheus with another directory: %v %v, want not ours", own, err)
	}
	if _, err := flagsNameData("prometheus", []byte("not json"), data); err == nil {
		t.Error("unreadable Prometheus flags accepted")
	}
	vm := []byte("-httpListenAddr=\"127.0.0.1:9\"\n-storageDataPath=\"/tmp/TestA&B123/001/data-7\"\n")
	if own, err := flagsNameData("victoria-metrics", vm, data); err != nil || !own {
		t.Errorf("VictoriaMetrics naming our directory: %v %v, want ours", own, err)
	}
}
