package monitor

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/sources/scrape"
)

// endpointSources are the source loops of one endpoint prefix (its
// probes and the scrape it alone uses), started and stopped together so
// that an endpoint can come and go while the monitor runs (a pod of a
// scale-up arriving, one rolled out leaving).
type endpointSources struct {
	runners []runner // registered before Run starts them
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// AddEndpoint adds one endpoint's probe and scrape, as AddConfig does for
// each of a config's, under its prefix; while the monitor runs they start
// at once. An endpoint whose prefix already has sources is an error.
func (m *Monitor) AddEndpoint(ep config.Endpoint) error {
	prefix := ep.Prefix()
	m.mu.Lock()
	_, dup := m.endpoints[prefix]
	if !dup {
		if m.endpoints == nil {
			m.endpoints = map[string]*endpointSources{}
		}
		m.endpoints[prefix] = &endpointSources{} // taken: a second AddEndpoint of it fails
	}
	m.mu.Unlock()
	if dup {
		return fmt.Errorf("monitor: endpoint %s is already measured", prefix)
	}
	if err := m.addEndpointProbe(ep); err != nil {
		m.RetireEndpoint(prefix)
		return err
	}
	for _, sc := range scrapeGroups([]config.Endpoint{ep}) {
		m.addFor(prefix, scrapeRunner(sc, m))
	}
	return nil
}

// RetireEndpoint stops the probes and scrapes of the endpoint prefix and
// returns once their loops have ended, so nothing more of them is
// observed; it says whether there were any. What they observed stays in
// the store: the caller says what the endpoint's end means.
func (m *Monitor) RetireEndpoint(prefix string) bool {
	m.mu.Lock()
	es, ok := m.endpoints[prefix]
	delete(m.endpoints, prefix)
	m.mu.Unlock()
	if !ok {
		return false
	}
	if es.cancel != nil {
		es.cancel()
		es.wg.Wait()
	}
	m.gpus.remove(prefix)
	return true
}

// addEndpointProbe adds ep's probe, unless it is turned off, under its
// prefix.
func (m *Monitor) addEndpointProbe(ep config.Endpoint) error {
	if ep.Probe != nil && ep.Probe.Disabled {
		return nil
	}
	o, err := ep.ProbeOptions()
	if err != nil {
		return err
	}
	r, err := m.probeRunner(o, ep.Prefix())
	if err != nil {
		return fmt.Errorf("endpoint %s: %w", ep.Prefix(), err)
	}
	m.addFor(ep.Prefix(), r)
	return nil
}

// addFor registers a source loop of the endpoint prefix ("" for none:
// a shared scrape), started at once when the monitor runs.
func (m *Monitor) addFor(prefix string, r runner) {
	if prefix == "" {
		m.add(r.name, r.run)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.endpoints == nil {
		m.endpoints = map[string]*endpointSources{}
	}
	es := m.endpoints[prefix]
	if es == nil {
		es = &endpointSources{}
		m.endpoints[prefix] = es
	}
	if m.runCtx == nil {
		es.runners = append(es.runners, r)
		return
	}
	m.startFor(es, r)
}

// startFor starts a loop of es (m.mu held, the monitor running). Once Run
// is stopping no loop starts: Run waits for those it knows.
func (m *Monitor) startFor(es *endpointSources, r runner) {
	if m.stopping {
		return
	}
	if es.ctx == nil {
		es.ctx, es.cancel = context.WithCancel(m.runCtx)
	}
	es.wg.Add(1)
	m.loops.Add(1)
	go func() {
		defer m.loops.Done()
		defer es.wg.Done()
		m.runSource(es.ctx, r)
	}()
}

// scrapeOwner is the one endpoint prefix whose scrape sc is, or "" when
// several endpoints share it (their scrape stays while any remains).
func scrapeOwner(eps []config.Endpoint, sc scrape.Config) string {
	owner := ""
	for _, ep := range eps {
		s, ok := ep.Scrape()
		if !ok || s.URL+s.Path != sc.URL+sc.Path {
			continue
		}
		if owner != "" && owner != ep.Prefix() {
			return ""
		}
		owner = ep.Prefix()
	}
	return owner
}

// ofEndpoint says whether name is the endpoint prefix or one of its
// models ("prefix/model").
func ofEndpoint(name, prefix string) bool {
	return name == prefix || strings.HasPrefix(name, prefix+"/")
}
