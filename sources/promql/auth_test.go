package promql

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/telemetry"
)

const testToken = "s3cr3t-T0KEN-d0-not-print"

func TestConfigNeverPrintsSecrets(t *testing.T) {
	cfg := Config{URL: "http://prom:9090", HTTP: httpclient.Config{
		Headers:     map[string]httpclient.SecretSource{"X-Api-Key": {Value: testToken}},
		BearerToken: httpclient.SecretSource{Value: testToken},
	}}
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("cfg", "cfg", cfg)
	s, err := New(cfg, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{fmt.Sprintf("%v %+v %#v", cfg, cfg, cfg), string(js), logged.String(), fmt.Sprintf("%+v", s.Config())} {
		if strings.Contains(o, testToken) {
			t.Errorf("secret printed: %s", o)
		}
	}
}

// authEcho fakes a Prometheus that fails every query with a proxy page
// echoing the request's Authorization header, as some proxies do.
func authEcho(t *testing.T) *fakeProm {
	f := newFakeProm(t, "llama")
	f.set(func(f *fakeProm) {
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			if strings.Contains(q, "vllm:num_requests_waiting") {
				w.WriteHeader(http.StatusBadGateway)
				_, err := fmt.Fprintf(w, "<html><title>bad gateway for %s</title></html>", r.Header.Get("Authorization"))
				if err != nil {
					panic(err)
				}
				return true
			}
			if strings.Contains(q, "vllm:num_requests_running") {
				writeJSON(w, http.StatusBadRequest, map[string]string{"status": "error", "errorType": "bad_data",
					"error": "invalid token " + r.Header.Get("Authorization")})
				return true
			}
			return false
		}
	})
	return f
}

func TestSecretAbsentFromErrorsAndOutput(t *testing.T) {
	for _, mode := range []string{"bearer", "basic"} {
		t.Run(mode, func(t *testing.T) {
			f := authEcho(t)
			dir := t.TempDir()
			file := filepath.Join(dir, "token")
			if err := os.WriteFile(file, []byte(testToken+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := testConfig(f.URL())
			if mode == "bearer" {
				cfg.HTTP.BearerToken = httpclient.SecretSource{File: file}
			} else {
				cfg.Basic = BasicAuth{User: "alice", Password: httpclient.SecretSource{File: file}}
			}
			s, rec := newTestSource(t, cfg)
			err := s.RefreshOnce(context.Background())
			if err == nil {
				t.Fatal("want errors from the echoing proxy")
			}
			// Observations as printed and the status as JSON (histogram
			// buckets hold +Inf, which encoding/json refuses).
			st := rec.status(t)
			js, jerr := json.Marshal(st)
			if jerr != nil {
				t.Fatal(jerr)
			}
			printed := fmt.Sprintf("%+v", rec.All())
			basic := "YWxpY2U6czNjcjN0LVQwS0VOLWQwLW5vdC1wcmludA==" // base64("alice:" + testToken)
			for _, out := range []string{err.Error(), string(js), printed, fmt.Sprintf("%+v", s.Config())} {
				if strings.Contains(out, testToken) || strings.Contains(out, basic) {
					t.Errorf("credential leaked: %s", out)
				}
			}
			if !strings.Contains(err.Error(), "<secret>") {
				t.Errorf("error %q: want the echoed credential replaced by <secret>", err)
			}
			if got := rec.find(telemetry.KindFailure, "", telemetry.Running); len(got) != 0 && !strings.Contains(got[0].Err, "bad_data") {
				t.Errorf("failure %q lacks the error type", got[0].Err)
			}
		})
	}
}

func TestAuthHeadersSent(t *testing.T) {
	f := newFakeProm(t, "llama")
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(f.URL())
	cfg.Basic = BasicAuth{User: "alice", Password: httpclient.SecretSource{File: pwFile}}
	cfg.HTTP.Headers = map[string]httpclient.SecretSource{"X-Scope-OrgID": {Value: "tenant-1"}}
	s, _ := newTestSource(t, cfg)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The file is re-read per request: a rotated password takes effect.
	if err := os.WriteFile(pwFile, []byte("second"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.headers) == 0 {
		t.Fatal("no requests")
	}
	check := func(h http.Header, pw string) {
		t.Helper()
		r := &http.Request{Header: h}
		u, p, ok := r.BasicAuth()
		if !ok || u != "alice" || p != pw || h.Get("X-Scope-OrgID") != "tenant-1" {
			t.Errorf("headers: basic %v %q %q, org %q; want alice/%s and tenant-1", ok, u, p, h.Get("X-Scope-OrgID"), pw)
		}
	}
	check(f.headers[0], "first")
	check(f.headers[len(f.headers)-1], "second")
}

func TestBearerFromEnv(t *testing.T) {
	t.Setenv("TT_PROM_TOKEN", testToken)
	f := newFakeProm(t, "llama")
	cfg := testConfig(f.URL())
	cfg.HTTP.BearerToken = httpclient.SecretSource{Env: "TT_PROM_TOKEN"}
	s, _ := newTestSource(t, cfg)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, h := range f.headers {
		if h.Get("Authorization") != "Bearer "+testToken {
			t.Fatalf("Authorization %q, want the bearer token", h.Get("Authorization"))
		}
	}
}

func TestMissingSecretFileIsAnError(t *testing.T) {
	f := newFakeProm(t, "llama")
	cfg := testConfig(f.URL())
	cfg.HTTP.BearerToken = httpclient.SecretSource{File: filepath.Join(t.TempDir(), "absent")}
	s, rec := newTestSource(t, cfg)
	if err := s.RefreshOnce(context.Background()); err == nil || !strings.Contains(err.Error(), "bearer token") {
		t.Fatalf("err = %v, want a bearer token error", err)
	}
	if f.count() != 0 {
		t.Errorf("%d requests sent without the credential", f.count())
	}
	if st := rec.status(t); st.State != telemetry.Error {
		t.Errorf("status %+v, want error", st)
	}
}

func TestRedirectToOtherHostCarriesNoCredentials(t *testing.T) {
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Authorization") + r.Header.Get("X-Scope-OrgID"); v != "" {
			leaked = append(leaked, v)
		}
		writeVector(w, time.Now(), nil, nil, nil)
	}))
	defer other.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	t.Setenv("TT_PROM_TOKEN", testToken)
	cfg := testConfig(redirector.URL)
	cfg.HTTP.BearerToken = httpclient.SecretSource{Env: "TT_PROM_TOKEN"}
	cfg.HTTP.Headers = map[string]httpclient.SecretSource{"X-Scope-OrgID": {Value: "tenant-1"}}
	s, _ := newTestSource(t, cfg)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Logf("refresh: %v", err) // the other host answers empty results; errors do not matter here
	}
	other.Close() // waits for handlers: leaked is safe to read
	if len(leaked) != 0 {
		t.Errorf("credentials sent to another host after a redirect: %d requests", len(leaked))
	}
}

func TestResponseBodyLimit(t *testing.T) {
	f := newFakeProm(t, "llama")
	cfg := testConfig(f.URL())
	cfg.HTTP.MaxBodyBytes = 64
	s, _ := newTestSource(t, cfg)
	err := s.RefreshOnce(context.Background())
	if err == nil || !strings.Contains(err.Error(), "larger than the 64-byte limit") {
		t.Errorf("err = %v, want the body limit", err)
	}
}

func TestAuthValidation(t *testing.T) {
	env := httpclient.SecretSource{Env: "A"}
	bad := []Config{
		{HTTP: httpclient.Config{BearerToken: env}, Basic: BasicAuth{User: "u"}},
		{Basic: BasicAuth{Password: env}},
		{HTTP: httpclient.Config{Headers: map[string]httpclient.SecretSource{"Authorization": env}}},
		{HTTP: httpclient.Config{Headers: map[string]httpclient.SecretSource{"Bad Name": env}}},
		{HTTP: httpclient.Config{CAFile: "/nonexistent/ca.pem"}},
	}
	for i, c := range bad {
		c.URL = "http://127.0.0.1:9090"
		if _, err := New(c, &recorder{}); err == nil {
			t.Errorf("case %d: %+v accepted", i, c)
		}
	}
}
