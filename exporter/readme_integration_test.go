//go:build integration

package exporter

import (
	"os/exec"
	"strings"
	"testing"
)

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
