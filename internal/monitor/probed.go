package monitor

import "github.com/ttftop/ttftop/sources/probe"

// noteProbed keeps the options an endpoint is probed with, so that a
// view can send it other requests the same way (the dashboard's race).
func (m *Monitor) noteProbed(endpoint string, o probe.Options) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.probed == nil {
		m.probed = map[string]probe.Options{}
	}
	m.probed[endpoint] = o
}

// ProbedAs returns the probe options of the endpoint named endpoint (its
// URL, protocol, model, headers and credentials); ok is false for an
// endpoint that is not probed (scraped or queried only), or not yet.
func (m *Monitor) ProbedAs(endpoint string) (o probe.Options, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok = m.probed[endpoint]
	return o, ok
}
