package exporter

import (
	"os"
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
