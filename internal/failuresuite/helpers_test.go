//go:build integration

package failuresuite

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The suite's readers of screens, JSON and recordings decide what its
// scenarios see; these checks pin them on known input (and run in -short).

func TestScreenReaders(t *testing.T) {
	const ep = "127.0.0.1:45963/out-m"
	for _, c := range []struct {
		line string
		want bool
	}{
		{"▸127.0.0.1:45963/out-m   vllm  ERROR", true},
		{" 127.0.0…/out-m          vllm  ERROR", true}, // cut in the middle
		{" 127.0.0.1:45963/other-m vllm  ERROR", false},
		{" 127.0.0.1:45964/out-x   vllm  ERROR", false},
	} {
		if got := names(c.line, ep); got != c.want {
			t.Errorf("names(%q) = %v, want %v", c.line, got, c.want)
		}
	}
	for _, c := range []struct {
		row  string
		want bool
	}{
		{"vllm     24.8ms/25.7ms        ▁ 11.9ms/11.9ms", true},
		{"vllm     1.2s/3.45s", true},
		{"vllm     45ms/54ms", true},
		{"vllm             ERROR       ▁          ERROR 12s    ERROR probe", false},
		{"vllm     ERROR    0/0    0%", false},
	} {
		if got := latencyPair.MatchString(c.row); got != c.want {
			t.Errorf("latencyPair on %q = %v, want %v", c.row, got, c.want)
		}
	}
	screen := " ttftop    1 endpoints · 2 FIRING · 11:27:51\n sources: ✖ webhook x ERROR: HTTP 405\n ENDPOINT\n" +
		" FIRING   127.0.0.1:45963/out-m        availability             since 11:27:19 32s     err 87% > 50%\n" +
		" RESOLVED 127.0.0.1:45963/out-m        tpot-p95                 ended 11:20:00\n"
	if n := headerFiring(screen); n != 2 {
		t.Errorf("headerFiring = %d, want 2", n)
	}
	if _, ok := alertLine(screen, "FIRING", ep, availabilityName); !ok {
		t.Errorf("alertLine missed the FIRING availability line")
	}
	if _, ok := alertLine(screen, "RESOLVED", ep, availabilityName); ok {
		t.Errorf("alertLine took the RESOLVED tpot line for availability")
	}
	if _, ok := alertLine(screen, "RESOLVED", ep, tpotName); !ok {
		t.Errorf("alertLine missed the RESOLVED tpot line")
	}
}

func TestJSONReaders(t *testing.T) {
	var d snapshotDoc
	doc := `{"at":"2026-12-01T11:00:00Z",
	  "endpoints":[{"name":"h:1/m","model":"m",
	    "signals":{"ttft":{"p50_ms":12,"source":"probe:http://h:1/v1/chat/completions","state":"error"},
	               "kv_cache":{"value_ratio":0.03,"source":"scrape:http://h:1/metrics","state":"live"}},
	    "server":{"ttft":{"p50_ms":15,"source":"scrape:http://h:1/metrics","state":"live"}}}],
	  "sources":[{"name":"a","kind":"promql","state":"live","warnings":["behind by 30s: lag"]},
	             {"name":"b","kind":"promql","state":"live","description":"reads the store; no flag set"},
	             {"name":"c","kind":"promql","state":"live","lag_ms":30000}],
	  "slo":{"objectives":[{"objective":"availability","endpoint":"h:1/m","kind":"availability","state":"firing"}],
	         "alerts":[{"objective":"tpot-p95","endpoint":"h:1/m","kind":"percentile","signal":"tpot","state":"resolved"}]}}`
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	ep, ok := endpointOf(d, "h:1/m")
	if !ok {
		t.Fatal("endpoint not found")
	}
	if f, ok := clientFigure(ep, sigTTFT); !ok || !f.failing() || f.liveNumber() {
		t.Errorf("client TTFT = %+v, %v: want the failing probe figure, not the server's", f, ok)
	}
	if _, ok := clientFigure(ep, "kv_cache"); ok {
		t.Errorf("a scraped figure was taken for a client one")
	}
	if f, ok := anyFigure(ep, "kv_cache"); !ok || f.Value == nil || *f.Value != 0.03 || f.Unit != "ratio" {
		t.Errorf("kv_cache = %+v: want 0.03, a ratio", f)
	}
	if f, ok := ep.Server[sigTTFT]; !ok || f.P50 == nil || *f.P50 != 15 || f.Unit != "ms" {
		t.Errorf("server TTFT = %+v: want p50 15 ms", f)
	}
	if !availabilityFiring(d, "h:1/m") {
		t.Errorf("availability firing not found")
	}
	if !hasAlert(alertHistory(d), "h:1/m", isTPOT, "resolved") {
		t.Errorf("resolved TPOT episode not found")
	}
	want := map[string]bool{"a": true, "b": false, "c": true}
	for _, s := range d.Sources {
		if got := s.saysLagging(); got != want[s.Name] {
			t.Errorf("source %s: saysLagging = %v, want %v", s.Name, got, want[s.Name])
		}
	}
}

func TestRecordingReader(t *testing.T) {
	dir := t.TempDir()
	lines := `{"kind":"header","at":"2026-12-01T10:00:00Z"}
{"kind":"checkpoint","at":"0001-01-01T00:00:00Z"}
{"kind":"sample","at":"2026-12-01T11:00:01Z","endpoint":"e"}
{"kind":"probe","at":"2026-12-01T11:00:05Z","endpoint":"e","probe":{"ok":false,"error_kind":"stall"}}
`
	var closed bytes.Buffer
	zw := gzip.NewWriter(&closed)
	if _, err := zw.Write([]byte(lines)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var cut bytes.Buffer // flushed, never closed, the last line torn: a crash
	zw = gzip.NewWriter(&cut)
	if _, err := zw.Write([]byte(lines + `{"kind":"sample","at":"2026-12-01T11:00:09Z"`)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		data     []byte
		complete bool
	}{{"closed.jsonl.gz", closed.Bytes(), true}, {"cut.jsonl.gz", cut.Bytes(), false}, {"plain.jsonl", []byte(lines), true}, {"torn.jsonl", []byte(lines + `{"kind"`), false}} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.data, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := readRecording(p)
		if err != nil {
			t.Fatal(err)
		}
		if r.complete != c.complete {
			t.Errorf("%s: complete = %v (%v), want %v", c.name, r.complete, r.endErr, c.complete)
		}
		first, last := r.span()
		if len(r.lines) != 4 || first.Second() != 1 || last.Second() != 5 {
			t.Errorf("%s: %d lines spanning %s to %s; want 4 lines, header and checkpoint not timed", c.name, len(r.lines), first, last)
		}
		if p := r.probes("e"); len(p) != 1 || p[0].ErrorKind != "stall" {
			t.Errorf("%s: probes = %+v", c.name, p)
		}
	}
}
