package scrape

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/telemetry"
)

const goodPage = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 1\n"

// Each bad page, after a good scrape, must give an error (not a panic),
// KindFailure for the known endpoint and an error status; the next good
// page recovers.
func TestBadPagesFailTheScrape(t *testing.T) {
	for name, tc := range map[string]struct {
		body, contentType, want string
	}{
		"malformed":     {"vllm:num_requests_running{model_name=\"m\" 1\n", "", "parse error"},
		"empty braces":  {"{} 3.14\n", "", "metric name"},
		"bad escape":    {"vllm:num_requests_running{model_name=\"a\\q\"} 1\n", "", "escape"},
		"truncated":     {"vllm:num_requests_running{model_name=\"m\"} 1", "", "unexpected end"},
		"json":          {`{"iteration": 1}`, "application/json", "JSON"},
		"html":          {"<html>oops</html>", "text/html", "HTML"},
		"bad value":     {"vllm:num_requests_running{model_name=\"m\"} one\n", "", "float"},
		"escape in err": {"vllm:num_requests_running{model_name=\"a\\\x1b]0;pwn\x07\"} 1\n", "", "escape"},
	} {
		t.Run(name, func(t *testing.T) {
			tg := newTarget(t, goodPage)
			c := &collector{}
			s := New(Config{URL: tg.URL}, c)
			ctx := context.Background()
			if err := s.ScrapeOnce(ctx); err != nil {
				t.Fatal(err)
			}
			c.Take()
			tg.set(tc.body)
			if tc.contentType != "" {
				tg.contentType = tc.contentType
			}
			err := s.ScrapeOnce(ctx)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			obs := c.Take()
			f := one(t, obs, telemetry.KindFailure, tg.host()+"/m", "")
			if strings.ContainsAny(f.Err, "\x1b\x07") {
				t.Fatalf("unsanitised error %q", f.Err)
			}
			st := status(t, obs)
			if st.State != telemetry.Error || st.Failures != 1 || st.LastOK.IsZero() {
				t.Fatalf("status %+v", st)
			}
			tg.set(goodPage)
			tg.contentType = "text/plain; version=0.0.4"
			if err := s.ScrapeOnce(ctx); err != nil {
				t.Fatalf("no recovery: %v", err)
			}
		})
	}
}

// Family-level problems fail only the signals that read the family.
func TestBadFamiliesFailTheirSignal(t *testing.T) {
	const lbl = `model_name="m"`
	for name, body := range map[string]string{
		"duplicate series": goodPage + "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{model_name=\"m\"} 0.1\nvllm:kv_cache_usage_perc{model_name=\"m\"} 0.2\n",
		"non-monotonic":    goodPage + hist("vllm:time_to_first_token_seconds", ttftBounds(), map[string][]float64{lbl: {5, 3, 6, 6}}, map[string]float64{lbl: 1}),
		"missing +Inf":     goodPage + "# TYPE vllm:time_to_first_token_seconds histogram\nvllm:time_to_first_token_seconds_bucket{model_name=\"m\",le=\"1\"} 1\nvllm:time_to_first_token_seconds_sum{model_name=\"m\"} 1\nvllm:time_to_first_token_seconds_count{model_name=\"m\"} 1\n",
	} {
		t.Run(name, func(t *testing.T) {
			tg := newTarget(t, body)
			c := &collector{}
			if err := New(Config{URL: tg.URL}, c).ScrapeOnce(context.Background()); err != nil {
				t.Fatalf("page failed: %v", err)
			}
			obs := c.Take()
			fails := find(obs, telemetry.KindFailure, tg.host()+"/m", "")
			var sigFail []telemetry.Observation
			for _, o := range obs {
				if o.Kind == telemetry.KindFailure && o.Signal != "" {
					sigFail = append(sigFail, o)
				}
			}
			if len(fails) != 0 || len(sigFail) != 1 {
				t.Fatalf("want one signal failure:\n%s", dump(obs))
			}
			checkGauge(t, obs, tg.host()+"/m", telemetry.Running, 1) // the rest still works
			if st := status(t, obs); len(st.Warnings) == 0 || st.State != telemetry.Live {
				t.Fatalf("status %+v", st)
			}
		})
	}
}

func TestBodyCapSlowTargetAnd404(t *testing.T) {
	var slow atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/big":
			_, _ = w.Write([]byte(strings.Repeat("# padding padding padding\n", 100)))
		case r.URL.Path == "/metrics" && slow.Load():
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
		case r.URL.Path == "/metrics":
			_, _ = w.Write([]byte(goodPage))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c := &collector{}
	err := New(Config{URL: srv.URL, Path: "/big", HTTP: httpclient.Config{MaxBodyBytes: 1024}}, c).ScrapeOnce(ctx)
	if err == nil || !strings.Contains(err.Error(), "size cap") {
		t.Fatalf("cap: %v", err)
	}
	err = New(Config{URL: srv.URL, Path: "/nope"}, c).ScrapeOnce(ctx)
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "--enable-metrics") {
		t.Fatalf("404: %v", err)
	}
	s := New(Config{URL: srv.URL, HTTP: httpclient.Config{Timeout: 150 * time.Millisecond}}, c)
	if err := s.ScrapeOnce(ctx); err != nil {
		t.Fatal(err)
	}
	slow.Store(true)
	// A timeout error, not the handler's late empty answer (3 s).
	if err := s.ScrapeOnce(ctx); !isTimeout(err) {
		t.Fatalf("slow target: %v, want a timeout error", err)
	}
	obs := c.Take()
	if len(find(obs, telemetry.KindFailure, "*", "")) != 1 {
		t.Fatalf("no failure for the slow target:\n%s", dump(obs))
	}
}

func TestLabelEscapesAreSanitised(t *testing.T) {
	tg := newTarget(t, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"llama\x1b]0;pwned\x07-8b\\n\u202eevil\"} 1\n")
	first, _ := scrapeTwice(t, tg, Config{})
	eps := endpoints(first)
	if len(eps) != 1 || strings.ContainsAny(eps[0], "\x1b\x07\n\u202e") || !strings.Contains(eps[0], `llama\x1b]0;pwned\x07-8b\x0a\u202eevil`) {
		t.Fatalf("endpoint %q", eps)
	}
}

func TestTGIModelIsSanitisedAndCached(t *testing.T) {
	var infoCalls atomic.Int32
	tgi := "# TYPE tgi_queue_size gauge\ntgi_queue_size 3\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/info" {
			infoCalls.Add(1)
			_, _ = w.Write([]byte(`{"model_id":"org/m\u001b[31m"}`))
			return
		}
		_, _ = w.Write([]byte(tgi))
	}))
	defer srv.Close()
	c := &collector{}
	s := New(Config{URL: srv.URL}, c)
	for range 3 {
		if err := s.ScrapeOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	eps := endpoints(c.Take())
	want := strings.TrimPrefix(srv.URL, "http://") + `/org/m\x1b[31m`
	if len(eps) != 3 || eps[0] != want || infoCalls.Load() != 1 {
		t.Fatalf("endpoints %q, /info calls %d", eps, infoCalls.Load())
	}
}

func TestTGIInfoDownFallsBackToHost(t *testing.T) {
	tg := newTarget(t, "# TYPE tgi_queue_size gauge\ntgi_queue_size 3\n")
	first, _ := scrapeTwice(t, tg, Config{})
	if eps := endpoints(first); len(eps) != 1 || eps[0] != tg.host() {
		t.Fatalf("endpoints %v", eps)
	}
	if st := status(t, first); len(st.Warnings) == 0 || !strings.Contains(st.Warnings[0], "/info") {
		t.Fatalf("status %+v", st)
	}
	withModel, _ := scrapeTwice(t, tg, Config{Model: "my-model"})
	if eps := endpoints(withModel); eps[0] != tg.host()+"/my-model" {
		t.Fatalf("configured model: %v", eps)
	}
}

func TestOpenMetricsNegotiation(t *testing.T) {
	const om = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 4\n" +
		"# TYPE vllm:generation_tokens counter\nvllm:generation_tokens_total{model_name=\"m\"} 10\n# EOF\n"
	var accepts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accepts = append(accepts, r.Header.Get("Accept"))
		if strings.Contains(r.Header.Get("Accept"), "application/openmetrics-text") {
			w.Header().Set("Content-Type", "application/openmetrics-text; version=1.0.0; charset=utf-8")
			_, _ = w.Write([]byte(om))
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write([]byte(goodPage))
	}))
	defer srv.Close()
	c := &collector{}
	if err := New(Config{URL: srv.URL, OpenMetrics: true}, c).ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	ep := strings.TrimPrefix(srv.URL, "http://") + "/m"
	obs := c.Take()
	checkGauge(t, obs, ep, telemetry.Running, 4)
	if st := status(t, obs); !contains(st.Recognised, "vllm:generation_tokens_total") {
		t.Fatalf("OpenMetrics counter not recognised: %v", st.Recognised)
	}
	if err := New(Config{URL: srv.URL}, c).ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkGauge(t, c.Take(), ep, telemetry.Running, 1)
	if !strings.HasPrefix(accepts[0], "application/openmetrics-text") || strings.Contains(accepts[1], "openmetrics") {
		t.Fatalf("Accept headers %q", accepts)
	}
}

func TestRedirectAndSecrets(t *testing.T) {
	const secret = "tok-abcdef-123456"
	var offHostAuth atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		offHostAuth.Store(r.Header.Get("Authorization") + r.Header.Get("X-Key"))
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("denied"))
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved/metrics":
			http.Redirect(w, r, "/metrics", http.StatusMovedPermanently)
		case "/away/metrics":
			http.Redirect(w, r, other.URL+"/metrics", http.StatusFound)
		case "/metrics":
			if r.Header.Get("Authorization") != "Bearer "+secret {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte("bad token " + r.Header.Get("Authorization")))
				return
			}
			_, _ = w.Write([]byte(goodPage))
		}
	}))
	defer srv.Close()
	t.Setenv("TT_SCRAPE_TOKEN", secret)
	httpCfg := httpclient.Config{BearerToken: httpclient.SecretSource{Env: "TT_SCRAPE_TOKEN"},
		Headers: map[string]httpclient.SecretSource{"X-Key": {Env: "TT_SCRAPE_TOKEN"}}}
	c := &collector{}
	ctx := context.Background()
	if err := New(Config{URL: srv.URL + "/moved", HTTP: httpCfg}, c).ScrapeOnce(ctx); err != nil {
		t.Fatalf("same-host redirect: %v", err)
	}
	err := New(Config{URL: srv.URL + "/away", HTTP: httpCfg}, c).ScrapeOnce(ctx)
	if err == nil || offHostAuth.Load() != "" {
		t.Fatalf("off-host redirect: err %v, credentials %q", err, offHostAuth.Load())
	}
	t.Setenv("TT_SCRAPE_TOKEN", "wrong-token-value")
	err = New(Config{URL: srv.URL, HTTP: httpCfg}, c).ScrapeOnce(ctx)
	if err == nil || strings.Contains(err.Error(), "wrong-token-value") {
		t.Fatalf("echoed token in error: %v", err)
	}
	for _, o := range c.Take() {
		if strings.Contains(o.Err, secret) || strings.Contains(o.Err, "wrong-token-value") ||
			(o.Status != nil && strings.Contains(o.Status.Err, "wrong-token-value")) {
			t.Fatalf("secret in observation %+v", o)
		}
	}
}

func TestUnknownEngineSaysSo(t *testing.T) {
	tg := newTarget(t, "# TYPE my_app_requests_total counter\nmy_app_requests_total 3\n")
	first, _ := scrapeTwice(t, tg, Config{})
	st := status(t, first)
	if st.State != telemetry.NoData || !strings.Contains(st.Description, "engine unknown") || len(endpoints(first)) != 0 {
		t.Fatalf("status %+v", st)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, u := range []string{"ftp://x/", "http://", "::bad"} {
		c := &collector{}
		if err := New(Config{URL: u}, c).ScrapeOnce(context.Background()); err == nil {
			t.Errorf("%q accepted", u)
		}
		if st := status(t, c.Take()); st.State != telemetry.Error {
			t.Errorf("%q: state %v", u, st.State)
		}
	}
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
