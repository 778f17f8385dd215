package monitor

import (
	"github.com/ttftop/ttftop/bandwidth"
	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/sources/scrape"
)

// scrapeGroups are the scrapes of a config's endpoints, one per metrics
// URL in the order first seen: several endpoints on one server share its
// page, each adding its model's MBU description, and a page several
// models share takes its model names from the engine's labels.
func scrapeGroups(eps []config.Endpoint) []scrape.Config {
	var out []scrape.Config
	at := map[string]int{}
	for _, ep := range eps {
		sc, ok := ep.Scrape()
		if !ok {
			continue
		}
		key := sc.URL + sc.Path
		i, seen := at[key]
		if !seen {
			at[key] = len(out)
			out = append(out, sc)
			continue
		}
		prev := &out[i]
		if len(sc.MBU) > 0 {
			if prev.MBU == nil {
				prev.MBU = map[string]bandwidth.Model{}
			}
			for k, v := range sc.MBU {
				prev.MBU[k] = v
			}
		}
		if prev.Model != sc.Model {
			prev.Model = "" // several models: the engine's labels name them
		}
	}
	return out
}
