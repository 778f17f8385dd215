package config

import (
	"fmt"
	"slices"

	"github.com/ttftop/ttftop/bandwidth"
)

// weightsErrors validates the endpoints' and the prometheus entries'
// weights, each problem at its key's line; the models of a prometheus
// entry in name order, so the errors read the same every run.
func (c *Config) weightsErrors() []string {
	var errs []string
	check := func(w bandwidth.Weights, what string, path ...any) {
		tp := append(append([]any{}, path...), "tensor_parallel")
		for _, p := range w.Problems(w.TensorParallel != 0 || c.inFile(tp...)) {
			if msg, ok := c.at(what+": "+p.Msg, append(append([]any{}, path...), p.Key)...); ok {
				errs = append(errs, msg)
			}
		}
	}
	for i, e := range c.Endpoints {
		if e.Weights != nil {
			check(*e.Weights, fmt.Sprintf("endpoints[%d] (%s): weights", i, e.Prefix()), "endpoints", i, "weights")
		}
	}
	for i, p := range c.Prometheus {
		models := make([]string, 0, len(p.Weights))
		for m := range p.Weights {
			models = append(models, m)
		}
		slices.Sort(models)
		for _, m := range models {
			check(p.Weights[m], fmt.Sprintf("prometheus[%d]: weights[%q]", i, m), "prometheus", i, "weights", m)
		}
	}
	return errs
}
