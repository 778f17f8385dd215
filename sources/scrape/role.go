package scrape

import "github.com/ttftop/ttftop/telemetry"

// role is the worker's role in a disaggregated model as its page says it
// (engines.Spec.RoleLabel: SGLang's engine_type), read from the series of
// its running and waiting gauges; "" when the page names none, or names
// a mode that is no role ("unified"). A configured role wins over it
// (endpointLabels).
func (sc *scrape) role() string {
	l := sc.spec.RoleLabel
	if !sc.hasSpec || l == "" {
		return ""
	}
	for _, sig := range []telemetry.Signal{telemetry.Running, telemetry.Waiting} {
		for _, a := range sc.spec.Signals[sig] {
			f := sc.page.Families[a.Name]
			if f == nil {
				continue
			}
			for _, ser := range f.Series {
				if v := ser.Label(l); v == telemetry.RolePrefill || v == telemetry.RoleDecode {
					return v
				}
			}
		}
	}
	return ""
}
