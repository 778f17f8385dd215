package report

import (
	"encoding/json"

	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/telemetry"
)

// DiagnosisReader is what a read-out takes from the monitor's diagnosis;
// *diagnosis.Diagnoser fits.
type DiagnosisReader interface {
	Latest() map[string]diagnosis.Diagnosis
}

// endpointJSON is an endpoint with its diagnosis: null until the monitor
// has diagnosed it (missing is never "none").
type endpointJSON struct {
	telemetry.EndpointSnapshot
	Diagnosis *diagnosis.Diagnosis `json:"diagnosis"`
}

// MarshalJSON writes the document; with diagnoses (Document.Diagnosis
// set), every endpoint carries its "diagnosis".
func (d Document) MarshalJSON() ([]byte, error) {
	type plain Document // the fields, without this method
	if d.Diagnosis == nil {
		return json.Marshal(plain(d))
	}
	return json.Marshal(struct {
		plain
		Endpoints []endpointJSON `json:"endpoints"`
	}{plain(d), withDiagnosis(d.Endpoints, d.Diagnosis)})
}

// WithDiagnosis is the endpoints as JSON with each one's "diagnosis"
// (null where none was made), for documents that write their own
// endpoint list (replay --json).
func WithDiagnosis(eps []telemetry.EndpointSnapshot, diag map[string]diagnosis.Diagnosis) any {
	return withDiagnosis(eps, diag)
}

func withDiagnosis(eps []telemetry.EndpointSnapshot, diag map[string]diagnosis.Diagnosis) []endpointJSON {
	out := make([]endpointJSON, len(eps))
	for i, es := range eps {
		out[i].EndpointSnapshot = es
		if dg, ok := diag[es.Name]; ok {
			out[i].Diagnosis = &dg
		}
	}
	return out
}
