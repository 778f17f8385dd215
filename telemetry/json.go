package telemetry

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// JSONUnit is the unit ttftop's JSON writes a figure shown in display unit
// display in, and how many display units make one of it: every number in
// the JSON names its unit in its key ("p99_ms", "value_ratio"), and ratios
// are fractions (0.2 = 20 %), never percentages. "" for a display unit
// without one (docs/json.md).
func JSONUnit(display string) (unit string, displayPer float64) {
	switch display {
	case "ms":
		return "ms", 1
	case "%":
		return "ratio", 100
	case "tok/s":
		return "tokens_per_s", 1
	case "tok":
		return "tokens", 1
	case "tok/step":
		return "tokens_per_step", 1
	case "req":
		return "requests", 1
	case "req/s":
		return "requests_per_s", 1
	case "/s":
		return "per_s", 1
	case "W":
		return "w", 1
	case "J/tok":
		return "j_per_token", 1
	case "GB/s":
		return "bytes_per_s", 1e-9
	}
	return "", 1
}

// JSONMap is v's JSON as a map, for the types whose JSON renames fields
// for their units (RenameJSON): everything v gains later is carried along.
func JSONMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	err = json.Unmarshal(b, &m)
	return m, err
}

// RenameJSON moves m's key to newKey, a number scaled by scale (a
// duration's nanoseconds by 1e-6 for "_ms"); nothing when key is absent.
func RenameJSON(m map[string]any, key, newKey string, scale float64) {
	v, ok := m[key]
	if !ok {
		return
	}
	delete(m, key)
	if f, isNum := v.(float64); isNum {
		m[newKey] = f * scale
		return
	}
	m[newKey] = v
}

// JSONUnit is the unit the JSON writes s's figures in and how many display
// units make one of it (JSONUnit); signals shown without a unit name
// theirs here.
func (s Signal) JSONUnit() (unit string, displayPer float64) {
	switch s {
	case ProbeSuccess:
		return "ratio", 1 // 1 or 0: the last probe succeeded or not
	case LoRARunning, LoRAWaiting:
		return "adapters", 1
	case WaitingDeferred:
		return "requests", 1
	case RouterPoolReady:
		return "endpoints", 1
	}
	return JSONUnit(s.Info().Unit)
}

// SignalMap is an endpoint's figures by signal. Its JSON writes each
// figure's numbers in the signal's JSON unit, named in the key: "p50_ms",
// "value_ratio", "mean_ms", and in "unit" for code that reads any signal;
// ages and windows in ms; how many observations a figure rests on as
// "observations".
type SignalMap map[Signal]SignalSnapshot

// MarshalJSON writes the figures by signal name, in name order.
func (m SignalMap) MarshalJSON() ([]byte, error) {
	keys := make([]Signal, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSON(b, string(k)); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = m[k].appendJSON(b, k); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// jsonUnit is the unit s's numbers are written in: its display unit's
// JSON name, the signal's for a figure shown without one, or the display
// unit itself where the JSON has no name for it yet.
func (s SignalSnapshot) jsonUnit(sig Signal) (string, float64) {
	if s.Unit == "" {
		return sig.JSONUnit()
	}
	if unit, per := JSONUnit(s.Unit); unit != "" {
		return unit, per
	}
	return s.Unit, 1
}

// appendJSON writes one figure of sig.
func (s SignalSnapshot) appendJSON(b []byte, sig Signal) ([]byte, error) {
	unit, per := s.jsonUnit(sig)
	w := jsonObject{b: append(b, '{')}
	num := func(stat string, v *float64) {
		if v == nil {
			return
		}
		key := stat
		if unit != "" {
			key += "_" + unit
		}
		w.number(key, *v/per)
	}
	w.str("unit", unit)
	num("p50", s.P50)
	num("p90", s.P90)
	num("p95", s.P95)
	num("p99", s.P99)
	w.str("p50_bound", string(s.P50Bound))
	w.str("p90_bound", string(s.P90Bound))
	w.str("p95_bound", string(s.P95Bound))
	w.str("p99_bound", string(s.P99Bound))
	num("mean", s.Mean)
	num("value", s.Value)
	if s.Count != 0 {
		w.number("observations", s.Count)
	}
	w.str("source", s.Source)
	w.field("state", s.State)
	w.time("observed_at", s.ObservedAt)
	w.str("error", s.Err)
	w.flag("approx", s.Approx)
	w.flag("newest_failed", s.NewestFailed)
	w.time("data_since", s.DataSince)
	w.flag("young", s.Young)
	if s.SeriesAgeS != 0 {
		w.number("series_age_ms", s.SeriesAgeS*1000)
	}
	if s.RateWindowS != 0 {
		w.number("rate_window_ms", s.RateWindowS*1000)
	}
	if s.Shared != nil {
		w.field("shared", s.Shared)
	}
	if w.err != nil {
		return nil, w.err
	}
	return append(w.b, '}'), nil
}

// jsonObject appends an object's fields; the first error sticks.
type jsonObject struct {
	b   []byte
	n   int
	err error
}

func (w *jsonObject) key(k string) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.b = strconv.AppendQuote(w.b, k) // keys are ASCII identifiers
	w.b = append(w.b, ':')
}

// number writes a finite float as encoding/json does (NaN and ±Inf never
// reach a snapshot: missing is nil).
func (w *jsonObject) number(k string, v float64) { w.field(k, v) }

func (w *jsonObject) str(k, v string) {
	if v != "" {
		w.field(k, v)
	}
}

func (w *jsonObject) flag(k string, v bool) {
	if v {
		w.field(k, true)
	}
}

func (w *jsonObject) time(k string, t time.Time) {
	if !t.IsZero() {
		w.field(k, t)
	}
}

func (w *jsonObject) field(k string, v any) {
	if w.err != nil {
		return
	}
	w.key(k)
	w.b, w.err = appendJSON(w.b, v)
}

func appendJSON(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	return append(b, j...), err
}

// UnmarshalJSON reads what MarshalJSON writes, back into display units
// (Go callers reading ttftop's JSON).
func (m *SignalMap) UnmarshalJSON(b []byte) error {
	var raw map[Signal]map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = make(SignalMap, len(raw))
	for sig, fields := range raw {
		var s SignalSnapshot
		if err := s.readJSON(sig, fields); err != nil {
			return fmt.Errorf("signal %s: %w", sig, err)
		}
		(*m)[sig] = s
	}
	return nil
}

// readJSON sets s from its JSON fields (appendJSON's).
func (s *SignalSnapshot) readJSON(sig Signal, fields map[string]json.RawMessage) error {
	s.Unit = sig.Info().Unit
	unit, per := s.jsonUnit(sig)
	num := func(stat string) (*float64, error) {
		key := stat
		if unit != "" {
			key += "_" + unit
		}
		raw, ok := fields[key]
		if !ok {
			return nil, nil
		}
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		v *= per
		return &v, nil
	}
	var errs []error
	for stat, dst := range map[string]**float64{"p50": &s.P50, "p90": &s.P90, "p95": &s.P95, "p99": &s.P99, "mean": &s.Mean, "value": &s.Value} {
		v, err := num(stat)
		*dst = v
		errs = append(errs, err)
	}
	var ms struct{ SeriesAge, RateWindow float64 }
	for key, dst := range map[string]any{
		"p50_bound": &s.P50Bound, "p90_bound": &s.P90Bound, "p95_bound": &s.P95Bound, "p99_bound": &s.P99Bound,
		"observations": &s.Count, "source": &s.Source, "state": &s.State, "observed_at": &s.ObservedAt, "error": &s.Err,
		"approx": &s.Approx, "newest_failed": &s.NewestFailed, "data_since": &s.DataSince, "young": &s.Young,
		"series_age_ms": &ms.SeriesAge, "rate_window_ms": &ms.RateWindow, "shared": &s.Shared,
	} {
		if raw, ok := fields[key]; ok {
			errs = append(errs, json.Unmarshal(raw, dst))
		}
	}
	s.SeriesAgeS, s.RateWindowS = ms.SeriesAge/1000, ms.RateWindow/1000
	return errors.Join(errs...)
}

// JSONSchema is the version every JSON document and line ttftop writes
// names in its "schema" field (docs/json.md,
// docs/schema/ttftop-v1.schema.json). A renamed field or a changed meaning
// is a new version.
const JSONSchema = "ttftop/v1"
