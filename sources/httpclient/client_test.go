package httpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const token = "s3cr3t-t0ken-value"

func TestSecretNeverPrinted(t *testing.T) {
	cfg := Config{BearerToken: SecretSource{Value: token}, Headers: map[string]SecretSource{"X-Api-Key": {Value: token}}}
	var out bytes.Buffer
	for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		fmt.Fprintf(&out, f+"\n", cfg)
		fmt.Fprintf(&out, f+"\n", cfg.BearerToken.Value)
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out.Write(b)
	slog.New(slog.NewTextHandler(&out, nil)).Info("cfg", "token", cfg.BearerToken.Value, "cfg", cfg)
	slog.New(slog.NewJSONHandler(&out, nil)).Info("cfg", "token", cfg.BearerToken.Value)
	if strings.Contains(out.String(), token) {
		t.Fatalf("secret printed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "<secret>") {
		t.Fatal("no <secret> marker")
	}
}

func TestBearerFromFileReReadAndEnv(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Team"))
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TT_TEAM", "blue")
	c, err := New(Config{BearerToken: SecretSource{File: file}, Headers: map[string]SecretSource{"X-Team": {Env: "TT_TEAM"}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Get(ctx, srv.URL, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, srv.URL, ""); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "Bearer one|blue,Bearer two|blue" {
		t.Fatalf("headers %v", got)
	}
	t.Setenv("TT_TEAM", "")
	c2, _ := New(Config{BearerToken: SecretSource{Env: "TT_UNSET_VAR_XYZ"}})
	if _, err := c2.Get(ctx, srv.URL, ""); err == nil || !strings.Contains(err.Error(), "TT_UNSET_VAR_XYZ") {
		t.Fatalf("missing env: %v", err)
	}
}

func TestRedirects(t *testing.T) {
	var offHost http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		offHost = r.Header.Clone()
		_, _ = w.Write([]byte("ok"))
	}))
	defer other.Close()
	var sameHost http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/off":
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
		case "/same":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/final":
			sameHost = r.Header.Clone()
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		}
	}))
	defer srv.Close()
	c, err := New(Config{BearerToken: SecretSource{Value: token}, Headers: map[string]SecretSource{"X-Api-Key": {Value: token}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Get(ctx, srv.URL+"/off", ""); err != nil {
		t.Fatal(err)
	}
	if offHost.Get("Authorization") != "" || offHost.Get("X-Api-Key") != "" {
		t.Fatalf("credentials forwarded off-host: %v", offHost)
	}
	if _, err := c.Get(ctx, srv.URL+"/same", ""); err != nil {
		t.Fatal(err)
	}
	if sameHost.Get("Authorization") != "Bearer "+token || sameHost.Get("X-Api-Key") != token {
		t.Fatalf("same-host redirect lost credentials: %v", sameHost)
	}
	_, err = c.Get(ctx, srv.URL+"/loop", "")
	if err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("redirect loop: %v", err)
	}
	none, _ := New(Config{MaxRedirects: -1})
	if _, err := none.Get(ctx, srv.URL+"/same", ""); err == nil {
		t.Fatal("redirect followed although refused")
	}
}

func TestErrorsAreScrubbedAndSanitised(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte("bad credentials " + r.Header.Get("Authorization") + " \x1b]0;pwned\x07 " + strings.Repeat("x", 4096)))
	}))
	defer srv.Close()
	c, _ := New(Config{BearerToken: SecretSource{Value: token}})
	u := strings.Replace(srv.URL, "http://", "http://user:pa55word@", 1) + "/metrics?token=qs-secret"
	_, err := c.Get(context.Background(), u, "")
	var herr *Error
	if !errors.As(err, &herr) || herr.Status != 401 {
		t.Fatalf("got %v", err)
	}
	msg := err.Error()
	for _, bad := range []string{token, "pa55word", "qs-secret", "\x1b", "\x07"} {
		if strings.Contains(msg, bad) {
			t.Errorf("error contains %q: %s", bad, msg)
		}
	}
	if len(msg) > 700 {
		t.Errorf("error body not capped: %d bytes", len(msg))
	}
}

func TestBodyCapAndTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
			return
		}
		_, _ = w.Write(bytes.Repeat([]byte("a"), 4096))
	}))
	defer srv.Close()
	c, _ := New(Config{MaxBodyBytes: 1024, Timeout: 100 * time.Millisecond})
	_, err := c.Get(context.Background(), srv.URL, "")
	if !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("cap: %v", err)
	}
	// A timeout error, not the handler's late empty answer (2 s): that the
	// timeout fired is the error's kind, not how long this machine took.
	_, err = c.Get(context.Background(), srv.URL+"/slow", "")
	if ne := net.Error(nil); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("timeout: %v, want a timeout error", err)
	}
	big, _ := New(Config{})
	if r, err := big.Get(context.Background(), srv.URL, ""); err != nil || len(r.Body) != 4096 {
		t.Fatalf("default cap: %v", err)
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	ctx := context.Background()
	plain, _ := New(Config{})
	if _, err := plain.Get(ctx, srv.URL, ""); err == nil {
		t.Fatal("self-signed certificate accepted without CA")
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	withCA, err := New(Config{CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := withCA.Get(ctx, srv.URL, ""); err != nil {
		t.Fatalf("with CA: %v", err)
	}
	insecure, _ := New(Config{InsecureSkipVerify: true})
	if _, err := insecure.Get(ctx, srv.URL, ""); err != nil || !insecure.Insecure() || withCA.Insecure() {
		t.Fatalf("insecure: %v", err)
	}
	if _, err := New(Config{CAFile: filepath.Join(t.TempDir(), "missing.pem")}); err == nil {
		t.Fatal("missing CA file accepted")
	}
}
