package monitor

import (
	"time"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/probe"
)

// DemoPDEndpoints monitor a running disaggregated demo deployment: the
// router probed every 3 s (what a user gets through it) and its page
// scraped, each worker scraped with its role and not probed (a user
// reaches workers only through the router).
func DemoPDEndpoints(pd *sim.PD) []config.Endpoint {
	eps := []config.Endpoint{{URL: pd.Router().URL(), Model: pd.Model(),
		Probe: &probe.Settings{Interval: slo.Duration(3 * time.Second), MaxTokens: 96, Prompt: "medium", ContinuousUsage: true}}}
	for _, w := range pd.Workers() {
		eps = append(eps, config.Endpoint{URL: w.URL(), Model: pd.Model(), Role: pd.Role(w), Probe: &probe.Settings{Disabled: true}})
	}
	return eps
}
