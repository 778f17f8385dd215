package exporter

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// readmeRules returns the rules block of docs/exporter.md (the README's
// once): the ```yaml block that starts with "groups:".
func readmeRules(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile("../docs/exporter.md")
	if err != nil {
		t.Fatal(err)
	}
	var rules string
	n := 0
	for _, block := range strings.Split(string(readme), "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if strings.HasPrefix(block, "groups:") {
			rules, n = block, n+1
		}
	}
	if n != 1 {
		t.Fatalf("docs/exporter.md has %d rules blocks (```yaml starting with groups:), want 1", n)
	}
	return rules
}

// TestREADMERulesAreTestdata keeps the documented rules and the ones promtool
// tests identical, so the documented rules are the tested ones.
func TestREADMERulesAreTestdata(t *testing.T) {
	want, err := os.ReadFile("testdata/rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	if got := readmeRules(t); got != string(want) {
		t.Errorf("docs/exporter.md's rules differ from exporter/testdata/rules.yml; copy one onto the other.\ndocs:\n%s\ntestdata:\n%s", got, want)
	}
}

// TestRulesWithPromtool checks the rules and runs promtool's rule unit
// tests: the page fires for a sustained bad ratio and for a dead endpoint,
// the ticket for a slow burn, and the silence alert when probes stop, when
// the exporter is down and when it is not scraped at all.
func TestRulesWithPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not found (apt-get install prometheus)")
	}
	for _, args := range [][]string{
		{"check", "rules", "rules.yml"},
		{"test", "rules", "rules_test.yml", "rules_slow_burn_test.yml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "testdata"
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
