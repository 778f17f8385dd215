package monitor

import (
	"context"
	"time"

	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/telemetry"
)

// Tunnel is a connection every probe and scrape of a host goes through
// (an SSH connection): Check reconnects when due and says why it is down.
type Tunnel interface {
	Name() string
	Check(ctx context.Context) error
	Close() error
}

// tunnelEvery is how often a tunnel's state is checked and reported.
const tunnelEvery = time.Second

// AddTunnel reports a tunnel as a source of its own, live or error with
// its reason every second, so a dropped connection reads DOWN at once
// (its probes fail with the same reason) and reconnects even while no
// probe is due. The tunnel is closed when the monitor stops.
func (m *Monitor) AddTunnel(t Tunnel, url string) {
	source := "ssh:" + t.Name()
	m.mu.Lock()
	m.closers = append(m.closers, t.Close)
	m.mu.Unlock()
	m.add(source, func(ctx context.Context) error {
		tick := time.NewTicker(tunnelEvery)
		defer tick.Stop()
		failures := 0
		var lastOK time.Time
		for {
			st := telemetry.SourceStatus{Name: "ssh " + t.Name(), Kind: "ssh", URL: url, State: telemetry.Live,
				Description: "the SSH connection every probe and scrape of this host goes through"}
			if err := t.Check(ctx); err != nil {
				failures++
				st.State, st.Err, st.Failures = telemetry.Error, sanitize.Text(err.Error()), failures
			} else {
				failures, lastOK = 0, time.Now()
			}
			st.LastOK = lastOK
			m.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: time.Now(), Source: source, Interval: tunnelEvery, Status: &st})
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
		}
	})
}
