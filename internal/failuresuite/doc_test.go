//go:build integration

package failuresuite

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The JSON ttftop prints (dashboard --json lines, replay --json), read
// as loosely as the assertions allow. Every field name the suite depends
// on is here or in the accessors below, so a renamed field is changed in
// one place (docs/failures.md lists these assumptions).

// snapshotDoc is one headless read-out.
type snapshotDoc struct {
	At        time.Time     `json:"at"`
	Endpoints []endpointDoc `json:"endpoints"`
	Sources   []sourceDoc   `json:"sources"`
	// SLO is the dashboard's --json SLO state: every objective × endpoint
	// and the alert episodes (firing, then resolved).
	SLO *sloDoc `json:"slo"`
	// Alerts and AlertHistory are where `replay --json` puts them.
	Alerts       []alertDoc `json:"alerts"`
	AlertHistory []alertDoc `json:"alert_history"`
}

type sloDoc struct {
	Objectives []alertDoc `json:"objectives"`
	Alerts     []alertDoc `json:"alerts"`
}

// alertDoc is one alert (slo.Alert's JSON).
type alertDoc struct {
	Objective  string    `json:"objective"`
	Endpoint   string    `json:"endpoint"`
	Kind       string    `json:"kind"`
	Signal     string    `json:"signal"`
	State      string    `json:"state"`
	Severity   string    `json:"severity"`
	ActiveAt   time.Time `json:"active_at"`
	FiredAt    time.Time `json:"fired_at"`
	ResolvedAt time.Time `json:"resolved_at"`
}

// endpointDoc is one endpoint with its figures. Signals is the figure a
// user reads first; Server (and Client, should the output name it so)
// hold the other side's figures.
type endpointDoc struct {
	Name    string               `json:"name"`
	Model   string               `json:"model"`
	Labels  map[string]string    `json:"labels"`
	Signals map[string]figureDoc `json:"signals"`
	Server  map[string]figureDoc `json:"server"`
	Client  map[string]figureDoc `json:"client"`
	// Diagnosis says why (issue 22); nil until diagnosed.
	Diagnosis *diagnosisDoc `json:"diagnosis"`
}

// figureDoc is one signal's figure with its provenance and state. Its
// numbers carry their unit in their key ("p50_ms", "value_ratio"): Unit
// is that suffix.
type figureDoc struct {
	Unit       string    `json:"-"`
	P50        *float64  `json:"-"`
	P99        *float64  `json:"-"`
	Value      *float64  `json:"-"`
	Source     string    `json:"source"`
	State      string    `json:"state"`
	Error      string    `json:"error"`
	ObservedAt time.Time `json:"observed_at"`
}

// UnmarshalJSON reads the named fields and the numbers by the statistic
// their key starts with, whatever their unit.
func (f *figureDoc) UnmarshalJSON(b []byte) error {
	type plain figureDoc
	if err := json.Unmarshal(b, (*plain)(f)); err != nil {
		return err
	}
	var all map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for k, v := range all {
		x, isNum := v.(float64)
		stat, unit, ok := strings.Cut(k, "_")
		if !isNum || !ok {
			continue
		}
		switch stat {
		case "p50":
			f.P50 = &x
		case "p99":
			f.P99 = &x
		case "value":
			f.Value = &x
		default:
			continue
		}
		f.Unit = unit
	}
	return nil
}

// sourceDoc is one source's health; fields keeps the whole object so that
// a new field (a lag, say) can be found without a struct change.
type sourceDoc struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	URL      string   `json:"url"`
	State    string   `json:"state"`
	Error    string   `json:"error"`
	Warnings []string `json:"warnings"`
	fields   map[string]any
}

func (s *sourceDoc) UnmarshalJSON(b []byte) error {
	type plain sourceDoc
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*s = sourceDoc(p)
	return json.Unmarshal(b, &s.fields)
}

// Objective and signal names the assertions use.
const (
	sigTTFT = "ttft"
	sigTPOT = "tpot"
)

// isAvailability tells the availability objective's alerts: by kind, or
// by a name that says so ("availability").
func isAvailability(a alertDoc) bool {
	return a.Kind == "availability" || strings.Contains(strings.ToLower(a.Objective), "availab")
}

// isTPOT tells the TPOT latency objective's alerts.
func isTPOT(a alertDoc) bool { return a.Signal == sigTPOT && a.Kind == "percentile" }

// currentAlerts is every alert the document says is in force now: the
// objectives' states and the episodes (dashboard), or the alerts at the
// replayed instant.
func currentAlerts(d snapshotDoc) []alertDoc {
	var out []alertDoc
	if d.SLO != nil {
		out = append(out, d.SLO.Objectives...)
		out = append(out, d.SLO.Alerts...)
	}
	return append(out, d.Alerts...)
}

// alertHistory is the episodes the document lists, resolved ones included.
func alertHistory(d snapshotDoc) []alertDoc {
	var out []alertDoc
	if d.SLO != nil {
		out = append(out, d.SLO.Alerts...)
	}
	out = append(out, d.AlertHistory...)
	return append(out, d.Alerts...)
}

// hasAlert reports whether list has an alert of endpoint, of the
// objective match accepts, in state.
func hasAlert(list []alertDoc, endpoint string, match func(alertDoc) bool, state string) bool {
	for _, a := range list {
		if a.Endpoint == endpoint && match(a) && a.State == state {
			return true
		}
	}
	return false
}

// endpointOf finds an endpoint by its name.
func endpointOf(d snapshotDoc, name string) (endpointDoc, bool) {
	for _, e := range d.Endpoints {
		if e.Name == name {
			return e, true
		}
	}
	return endpointDoc{}, false
}

// endpointByModel finds an endpoint by its model (PromQL mode names
// endpoints after the model label).
func endpointByModel(d snapshotDoc, model string) (endpointDoc, bool) {
	for _, e := range d.Endpoints {
		if e.Model == model || e.Name == model || strings.HasSuffix(e.Name, "/"+model) {
			return e, true
		}
	}
	return endpointDoc{}, false
}

// sourceKind is the kind part of a figure's source, "probe" of
// "probe:http://…".
func sourceKind(source string) string {
	kind, _, _ := strings.Cut(source, ":")
	return kind
}

// clientFigure is the probes' (client's) figure of sig, wherever the
// output puts it: a Client map, or Signals when its source is a probe.
func clientFigure(e endpointDoc, sig string) (figureDoc, bool) {
	if f, ok := e.Client[sig]; ok {
		return f, true
	}
	if f, ok := e.Signals[sig]; ok && sourceKind(f.Source) == "probe" {
		return f, true
	}
	return figureDoc{}, false
}

// anyFigure is sig's figure from whichever side has it (PromQL mode has
// server figures only).
func anyFigure(e endpointDoc, sig string) (figureDoc, bool) {
	for _, m := range []map[string]figureDoc{e.Signals, e.Server, e.Client} {
		if f, ok := m[sig]; ok {
			return f, true
		}
	}
	return figureDoc{}, false
}

// String says a figure in one line, for failure messages.
func (f figureDoc) String() string {
	num := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatFloat(*p, 'g', 4, 64)
	}
	s := fmt.Sprintf("%s p50=%s p99=%s value=%s%s from %s", f.State, num(f.P50), num(f.P99), num(f.Value), f.Unit, f.Source)
	if f.Error != "" {
		s += " (" + f.Error + ")"
	}
	return s
}

// hasNumber reports whether a figure carries a value.
func (f figureDoc) hasNumber() bool { return f.P50 != nil || f.P99 != nil || f.Value != nil }

// liveNumber is a figure presented as fresh and healthy: a value whose
// state is live.
func (f figureDoc) liveNumber() bool { return f.State == "live" && f.hasNumber() }

// failing is a figure that shows a failure: an error state.
func (f figureDoc) failing() bool { return f.State == "error" }

// sourcesOfKind lists the sources of one kind ("promql", "probe",
// "notify"...).
func sourcesOfKind(d snapshotDoc, kind string) []sourceDoc {
	var out []sourceDoc
	for _, s := range d.Sources {
		if s.Kind == kind {
			out = append(out, s)
		}
	}
	return out
}

// mentionsLag matches "lag", "lagging", "max_lag", "lag_ms", not "flag".
var mentionsLag = regexp.MustCompile(`(?i)(^|[^a-z])lag`)

// saysLagging reports whether a source's health says it lags: a state of
// its own, a field named for the lag with a value, or an error or warning
// that names it. (The description, which says what the source is, does
// not count.)
func (s sourceDoc) saysLagging() bool {
	if s.State == "lagging" || mentionsLag.MatchString(s.State) || mentionsLag.MatchString(s.Error) {
		return true
	}
	for _, w := range s.Warnings {
		if mentionsLag.MatchString(w) {
			return true
		}
	}
	for k, v := range s.fields {
		if !mentionsLag.MatchString(k) {
			continue
		}
		switch x := v.(type) {
		case nil:
		case bool:
			if x {
				return true
			}
		case float64:
			if x != 0 {
				return true
			}
		case string:
			if x != "" {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// plainOK is a source reported healthy with nothing said about lag.
func (s sourceDoc) plainOK() bool { return s.State == "live" && !s.saysLagging() }

// diagnosisDoc is an endpoint's "diagnosis" in the JSON lines.
type diagnosisDoc struct {
	Causes []findingDoc `json:"causes"`
}

// findingDoc is one named cause with its evidence.
type findingDoc struct {
	Cause   string `json:"cause"`
	Summary string `json:"summary"`
	Next    string `json:"next"`
	// Evidence of the causes this suite checks is in milliseconds
	// (ttftop/v1 names each number for its unit: value_ms, baseline_ms).
	Evidence []struct {
		Figure       string   `json:"figure"`
		Value        float64  `json:"value_ms"`
		Baseline     *float64 `json:"baseline_ms"`
		BaselineFrom string   `json:"baseline_from"`
	} `json:"evidence"`
}
