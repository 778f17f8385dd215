package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/probetest"
	"github.com/ttftop/ttftop/telemetry"
)

func TestSecretNeverPrinted(t *testing.T) {
	t.Setenv("TT_PROBE_TEST_KEY", probetest.SecretToken)
	base := probetest.EchoServer(t)
	var out bytes.Buffer

	// Results and records, printed and encoded.
	opts := Options{URL: base + "/v1/chat/completions?case=event", Model: "m", Auth: Auth{Token: probetest.SecretToken},
		Headers: []Header{{Name: "X-Extra", Value: probetest.SecretToken}}}
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r := p.Do(context.Background(), func(pr Progress) { out.WriteString(pr.Fragment) })
	if r.ErrorKind != ErrStream {
		t.Fatalf("want a stream error, got %q %s", r.ErrorKind, r.Err)
	}
	b, _ := json.Marshal(r)
	out.Write(b)
	rec := r.Record()
	b, _ = json.Marshal(rec)
	out.Write(b)
	fmt.Fprintf(&out, "%v %+v %#v %s %q %x", r, r, r, r.Err, r.Err, r.Err)
	probetest.NoSecret(t, "result", &out)

	// Options, the Prober and a Runner, through every printer.
	for _, v := range []any{opts, &opts, opts.Auth, opts.Headers, p, Secret(probetest.SecretToken)} {
		fmt.Fprintf(&out, "%v|%+v|%#v|%s|%q|%x|%X|%10s|%-8v", v, v, v, v, v, v, v, v, v)
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("json %T: %v", v, err)
		}
		out.Write(b)
		slog.New(slog.NewJSONHandler(&out, nil)).Info("x", "v", v)
		slog.New(slog.NewTextHandler(&out, nil)).Info("x", "v", v)
	}
	probetest.NoSecret(t, "options", &out)

	run, err := NewRunner(Options{URL: base, Auth: Auth{TokenEnv: "TT_PROBE_TEST_KEY"}}, &collector{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "%v %+v %#v", run, run, run)
	obs := runUntil(t, Options{URL: base, Interval: 50 * time.Millisecond, Auth: Auth{TokenEnv: "TT_PROBE_TEST_KEY"}},
		20*time.Second, nth(2, telemetry.KindProbe))
	for _, o := range obs {
		b, _ := json.Marshal(o)
		out.Write(b)
		fmt.Fprintf(&out, "%+v", o)
		if o.Live != nil {
			out.WriteString(o.Live.Text)
		}
	}
	if len(obs) < 5 {
		t.Fatalf("runner emitted only %d observations", len(obs))
	}
	probetest.NoSecret(t, "runner observations", &out)
}

func TestParseHeader(t *testing.T) {
	h, err := ParseHeader("X-Api-Key:  abc ")
	if err != nil || h.Name != "X-Api-Key" || h.Value.Reveal() != "abc" {
		t.Fatalf("%v %v", h, err)
	}
	for _, bad := range []string{"novalue", ": x", "a b: c"} {
		if _, err := ParseHeader(bad); err == nil {
			t.Errorf("ParseHeader(%q) accepted", bad)
		}
	}
}

// TestKeyFileRereadAndHeaders: a rotated key file is used by the next
// request; custom headers are sent.
func TestKeyFileRereadAndHeaders(t *testing.T) {
	var seen []string
	var mu sync.Mutex
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Team"))
		mu.Unlock()
		scripted("text/event-stream", []step{{Data: sseData(chatChunk("a"), chatChunk("b"), finishChunk, "[DONE]")}})(w, r)
	}))
	keyFile := filepath.Join(t.TempDir(), "key")
	h, _ := ParseHeader("X-Team: infra")
	p, err := New(Options{URL: srv.URL, Model: "m", Auth: Auth{TokenFile: keyFile}, Headers: []Header{h}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, key := range []string{"first", "second"} {
		if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if r := p.Do(context.Background(), nil); !r.OK {
			t.Fatal(r.Err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != "Bearer first|infra" || seen[1] != "Bearer second|infra" {
		t.Errorf("server saw %q", seen)
	}
	_ = os.Remove(keyFile)
	if r := p.Do(context.Background(), nil); r.ErrorKind != ErrConfig || !strings.Contains(r.Err, "API key file") {
		t.Errorf("missing key file: %q %q", r.ErrorKind, r.Err)
	}
}
