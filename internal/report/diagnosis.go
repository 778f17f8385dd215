package report

import (
	"encoding/json"

	"github.com/tokentop/tokentop/diagnosis"
	"github.com/tokentop/tokentop/telemetry"
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
	eps := make([]endpointJSON, len(d.Endpoints))
	for i, es := range d.Endpoints {
		eps[i].EndpointSnapshot = es
		if dg, ok := d.Diagnosis[es.Name]; ok {
			eps[i].Diagnosis = &dg
		}
	}
	return json.Marshal(struct {
		plain
		Endpoints []endpointJSON `json:"endpoints"`
	}{plain(d), eps})
}
