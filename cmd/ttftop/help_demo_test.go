package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/slo"
)

// The demo's help says what the demo runs: as many models as it starts,
// the reasoning one by name, and the window it starts at as --window's
// default. (QA read "three models" and "default 5m" beside four models
// and "window 1m".)
func TestDemoHelpIsTrue(t *testing.T) {
	models := len(sim.DemoConfig().Models)
	words := map[int]string{3: "three", 4: "four", 5: "five", 6: "six"}
	for _, cmd := range []string{"demo", "sim", "serve"} {
		var out, errs bytes.Buffer
		if code := run(context.Background(), []string{cmd, "--help"}, &out, &errs); code != 0 {
			t.Fatalf("%s --help: exit %d, stderr %q", cmd, code, errs.String())
		}
		help := strings.Join(strings.Fields(out.String()+errs.String()), " ")
		if !strings.Contains(help, "DeepSeek-R1-Distill") {
			t.Errorf("%s --help does not name the reasoning model: %s", cmd, help)
		}
		for n, w := range words {
			if n != models && strings.Contains(help, w+" models") {
				t.Errorf("%s --help says %q; the demo runs %d", cmd, w+" models", models)
			}
		}
		if cmd == "demo" {
			if !strings.Contains(help, words[models]+" models") {
				t.Errorf("demo --help does not say %q", words[models]+" models")
			}
			want := regexp.MustCompile(`--window duration quantile window of the figures shown: [^(]*\(default ` + regexp.QuoteMeta(slo.FormatDuration(monitor.DemoWindow)))
			if !want.MatchString(help) {
				t.Errorf("demo --help: --window's default is not the demo's %v: %s", monitor.DemoWindow, help)
			}
		}
	}
}

// The example config names the colour-blind theme as the CLI does.
func TestExampleConfigThemeNames(t *testing.T) {
	b, err := os.ReadFile("../../examples/ttftop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("colorblind")) || !bytes.Contains(b, []byte("okabe-ito")) {
		t.Errorf("examples/ttftop.yaml does not call the colour-blind theme okabe-ito as --theme does")
	}
}
