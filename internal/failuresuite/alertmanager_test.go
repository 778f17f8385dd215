//go:build integration

package failuresuite

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// alertmanager is a real Alertmanager on loopback, with a receiver that
// goes nowhere: the suite reads what it holds through its API.
type alertmanager struct {
	url    string
	proc   *process
	client *http.Client
}

// amConfig routes everything to a receiver without integrations: the
// test reads the alerts from GET /api/v2/alerts.
const amConfig = `route:
  receiver: sink
  group_wait: 1s
  group_interval: 1s
receivers:
  - name: sink
`

// startAlertmanager starts Alertmanager 0.25+ on a free loopback port
// (clustering off), or skips the test when it is not installed.
func startAlertmanager(t *testing.T) *alertmanager {
	t.Helper()
	bin := requireBinary(t, "apt-get install prometheus-alertmanager", "/usr/bin/prometheus-alertmanager", "alertmanager", "prometheus-alertmanager")
	dir := t.TempDir()
	cfg := writeFile(t, dir, "alertmanager.yml", amConfig)
	var last error
	for attempt := range 3 { // the free port can be taken before it binds
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		p := startProcess(t, "alertmanager", procOptions{dir: dir}, bin,
			"--config.file="+cfg, "--storage.path="+filepath.Join(dir, fmt.Sprintf("data%d", attempt)),
			"--web.listen-address="+addr, "--cluster.listen-address=", "--log.level=warn")
		am := &alertmanager{url: "http://" + addr, proc: p, client: &http.Client{Timeout: 5 * time.Second}}
		if last = waitHTTP(am.url+"/-/ready", 30*time.Second); last == nil {
			return am
		}
		if err := p.stop(5 * time.Second); err != nil {
			t.Logf("stopping an Alertmanager that did not start: %v", err)
		}
	}
	t.Fatalf("alertmanager did not start: %v", last)
	return nil
}

// webhookURL is what ttftop's --webhook gets: the push API.
func (a *alertmanager) webhookURL() string { return a.url + "/api/v2/alerts" }

// amAlert is one alert of GET /api/v2/alerts.
type amAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
	Status      struct {
		State string `json:"state"`
	} `json:"status"`
}

// alerts lists what Alertmanager holds as active (its API leaves out
// alerts whose endsAt has passed: resolved ones).
func (a *alertmanager) alerts() ([]amAlert, error) {
	resp, err := a.client.Get(a.url + "/api/v2/alerts")
	if err != nil {
		return nil, err
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if cerr := resp.Body.Close(); rerr == nil {
		rerr = cerr
	}
	if rerr != nil {
		return nil, rerr
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /api/v2/alerts: %s: %.200s", resp.Status, body)
	}
	var out []amAlert
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("GET /api/v2/alerts: %w", err)
	}
	return out, nil
}

// amAvailability accepts the availability objective's alertname.
func amAvailability(alertname string) bool {
	return strings.HasPrefix(strings.ToLower(alertname), "availab")
}

// activeFor reports whether Alertmanager holds an active alert of the
// endpoint whose alertname match accepts.
func (a *alertmanager) activeFor(endpoint string, match func(string) bool) (bool, error) {
	list, err := a.alerts()
	if err != nil {
		return false, err
	}
	now := time.Now()
	for _, al := range list {
		if al.Labels["endpoint"] != endpoint || !match(al.Labels["alertname"]) {
			continue
		}
		if al.Status.State == "active" && (al.EndsAt.IsZero() || al.EndsAt.After(now)) {
			return true, nil
		}
	}
	return false, nil
}
