package config

import (
	"strings"
	"testing"
)

// A bad indent is reported on its own line. The YAML parser names the
// line where the enclosing block began (line 2 here, "line 1" for a file
// whose mapping starts there), which sends the reader to the wrong place.
func TestBadIndentIsReportedOnItsLine(t *testing.T) {
	_, err := Load("testdata/bad_indent.yaml")
	if err == nil {
		t.Fatal("a file with a bad indent loaded")
	}
	if want := "testdata/bad_indent.yaml: line 4: "; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it at %q", err, want)
	}
}

// Every mistake of a file comes in one run, in the file's order, each
// with its line: unknown keys, values that do not parse and entries that
// do not validate alike. A value that did not parse is not reported a
// second time by the validation of its entry (the weights' bandwidth is
// not also "missing").
func TestEveryMistakeOfAFileAtOnce(t *testing.T) {
	_, err := Load("testdata/many_mistakes.yaml")
	if err == nil {
		t.Fatal("a file with mistakes loaded")
	}
	msg := err.Error()
	want := []string{
		`line 2: invalid duration "5 parsecs"`,
		`line 4: endpoints[0] (127.0.0.1:8000): url: "ftp://127.0.0.1:8000": scheme must be http or https`,
		`line 5: unknown key "modle"`,
		`line 8: endpoints[1] (127.0.0.1:8001): probe interval 1ms is below the 100ms floor`,
		`line 13: peak_bandwidth "3.35TiB/s" is not a bandwidth`,
		`line 16: invalid duration "soon"`,
		`line 20: invalid percentile`,
		`line 22: slos[1] (no-threshold): threshold is required`,
		`line 24: fps 500 is outside 1–60`,
	}
	at := 0
	for _, w := range want {
		i := strings.Index(msg[at:], w)
		if i < 0 {
			t.Errorf("missing, or out of the file's order: %q\nin %s", w, msg)
			continue
		}
		at += i + len(w)
	}
	if n := strings.Count(msg, "line "); n != len(want) {
		t.Errorf("%d errors, want %d (one per mistake):\n%s", n, len(want), strings.ReplaceAll(msg, "; ", "\n"))
	}
}
