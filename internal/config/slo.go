package config

import (
	"fmt"
	"strings"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// Objective is the slo.Objective this entry describes, completed and
// validated by slo's rules, so a file cannot hold an objective the engine
// would drop.
func (s SLO) Objective() (slo.Objective, error) {
	o := slo.Objective{Name: strings.TrimSpace(s.Name), Endpoint: s.Endpoint, Kind: slo.Kind(s.Kind), Signal: telemetry.Signal(s.Signal),
		Percentile: float64(s.Percentile), Window: s.Window.D(), For: s.For.D(), KeepFiringFor: s.KeepFiringFor.D(),
		Target: float64(s.Target), Period: s.Period.D()}
	switch o.Kind {
	case "":
		o.Kind = slo.Percentile
	case slo.Percentile, slo.Ratio, slo.ErrorRate, slo.Availability, slo.TargetUp:
	default:
		return o, fmt.Errorf("kind %q is not percentile, ratio, error_rate, availability or target_up", s.Kind)
	}
	if o.Kind == slo.ErrorRate && o.Signal == "" {
		o.Signal = telemetry.ErrorRate
	}
	switch o.Kind {
	case slo.Availability:
		// Judged on the probes' error rate against 1 − target.
		if s.Threshold != "" || s.Signal != "" {
			return o, fmt.Errorf("an availability objective takes a target and a window, not a signal or threshold")
		}
	case slo.TargetUp:
		if s.Threshold != "" || s.Signal != "" || s.Target != 0 {
			return o, fmt.Errorf("a target_up objective takes for and a severity, not a signal, threshold or target")
		}
	default:
		if s.Threshold == "" {
			return o, fmt.Errorf("threshold is required")
		}
		thr, err := slo.ParseThreshold(o.Signal, s.Threshold)
		if err != nil {
			return o, fmt.Errorf("threshold: %w", err)
		}
		o.Threshold = thr
	}
	if err := o.WithDefaults().Validate(); err != nil {
		return o, err
	}
	return o, nil
}

// Objectives converts the file's SLOs; the first invalid one is an error
// naming its entry.
func Objectives(in []SLO) ([]slo.Objective, error) {
	var out []slo.Objective
	for i, s := range in {
		o, err := s.Objective()
		if err != nil {
			return nil, fmt.Errorf("slos[%d] (%s): %w", i, strings.TrimSpace(s.Name), err)
		}
		out = append(out, o)
	}
	return out, nil
}
