package tui

import (
	"reflect"
	"testing"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/table"
)

// setNonZero gives v a non-zero value of its type, for the fields the
// change detection must see.
func setNonZero(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString("changed")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 7)
	case reflect.Uint8:
		v.SetUint(v.Uint() + 1)
	case reflect.Float64:
		v.SetFloat(v.Float() + 7)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		setNonZero(t, p.Elem())
		v.Set(p)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(1e9, 0)))
			return
		}
		setNonZero(t, v.Field(0))
	default:
		t.Fatalf("no non-zero value for %s", v.Type())
	}
}

// Every field of what a refresh carries changes the fingerprint, so a
// field added to a snapshot, source status or alert can never be missed
// by the redraw decision (the hand-kept list this replaced missed Approx,
// budgets, burn rates and warnings).
func TestFingerprintSeesEveryField(t *testing.T) {
	base := func() *dataMsg {
		return &dataMsg{
			rows: []table.Row{{Endpoint: telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: "e"},
				Signals: map[telemetry.Signal]telemetry.SignalSnapshot{telemetry.TTFT: {}}}}},
			snap:   telemetry.Snapshot{Sources: []telemetry.SourceStatus{{}}},
			alerts: []slo.Alert{{}},
		}
	}
	ref := fingerprint(base())
	check := func(what string, typ reflect.Type, set func(m *dataMsg, f func(reflect.Value))) {
		for i := range typ.NumField() {
			field := typ.Field(i)
			if what == "Alert" && field.Name == "EvaluatedAt" {
				continue // moves every second while nothing shown does
			}
			m := base()
			set(m, func(v reflect.Value) { setNonZero(t, v.Field(i)) })
			if fingerprint(m) == ref {
				t.Errorf("%s.%s changed and the fingerprint did not", what, field.Name)
			}
		}
	}
	check("SignalSnapshot", reflect.TypeFor[telemetry.SignalSnapshot](), func(m *dataMsg, f func(reflect.Value)) {
		s := m.rows[0].Endpoint.Signals[telemetry.TTFT]
		f(reflect.ValueOf(&s).Elem())
		m.rows[0].Endpoint.Signals[telemetry.TTFT] = s
	})
	check("SourceStatus", reflect.TypeFor[telemetry.SourceStatus](), func(m *dataMsg, f func(reflect.Value)) {
		f(reflect.ValueOf(&m.snap.Sources[0]).Elem())
	})
	check("Alert", reflect.TypeFor[slo.Alert](), func(m *dataMsg, f func(reflect.Value)) {
		f(reflect.ValueOf(&m.alerts[0]).Elem())
	})
	check("Row", reflect.TypeFor[table.Row](), func(m *dataMsg, f func(reflect.Value)) {
		f(reflect.ValueOf(&m.rows[0]).Elem())
	})
	if a, b := fingerprint(base()), fingerprint(base()); a != b {
		t.Error("the same refresh hashes differently")
	}
}
