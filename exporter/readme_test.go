package exporter

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ruleTests checks the README's burn-rate alert with promtool's rule unit
// tests: one probe every 15 s, all good for an hour, then every TTFT over
// 0.5 s. The page must not fire while good and must fire after the 1 h
// window has seen more than 14.4 % bad probes (about 9 minutes of them).
const ruleTests = `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 15s
    input_series:
      - series: 'tokentop_probe_requests_total{endpoint="a",model="m",result="success",error_kind=""}'
        values: '0+1x300'
      - series: 'tokentop_probe_ttft_seconds_bucket{endpoint="a",model="m",le="0.5"}'
        values: '0+1x240 240+0x59'
    alert_rule_test:
      - eval_time: 60m
        alertname: TokentopTTFTBudgetBurn
        exp_alerts: []
      - eval_time: 75m
        alertname: TokentopTTFTBudgetBurn
        exp_alerts:
          - exp_labels: {endpoint: a, severity: page}
            exp_annotations:
              summary: "a: TTFT SLO (99 % ≤ 0.5 s) error budget burning fast"
  - interval: 15s
    input_series:
      - series: 'tokentop_probe_last_result_timestamp_seconds{endpoint="a",model="m"}'
        values: '0+15x8 120+0x20'
    alert_rule_test:
      - eval_time: 1m
        alertname: TokentopProbeSilent
        exp_alerts: []
      - eval_time: 5m
        alertname: TokentopProbeSilent
        exp_alerts:
          - exp_labels: {endpoint: a, model: m, severity: ticket}
            exp_annotations:
              summary: "a: no tokentop probe result for 3 probe intervals"
`

// TestREADMERules runs promtool over the rules printed in README.md, so
// the documented example is valid and does what it says.
func TestREADMERules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not found (apt-get install prometheus)")
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var rules string
	for _, block := range strings.Split(string(readme), "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if strings.HasPrefix(block, "groups:") {
			rules = block
		}
	}
	if rules == "" {
		t.Fatal("no rules block (```yaml starting with groups:) in README.md")
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"rules.yml": rules, "tests.yml": ruleTests} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"check", "rules", "rules.yml"}, {"test", "rules", "tests.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
