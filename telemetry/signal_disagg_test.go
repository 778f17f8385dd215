package telemetry

import "testing"

// A caller that edits its list of disaggregation signals leaves the next
// caller's list and the display order (Signals) as they were.
func TestDisaggSignalsNotShared(t *testing.T) {
	first := DisaggSignals()
	first[0] = TTFT
	if got := DisaggSignals()[0]; got != KVTransferTime {
		t.Fatalf("DisaggSignals()[0] = %s after a caller changed its copy, want %s", got, KVTransferTime)
	}
	if got := DiagnosisSignals()[len(EngineSignals)]; got != KVTransferTime {
		t.Fatalf("DiagnosisSignals lists %s first after the engine signals, want %s", got, KVTransferTime)
	}
}
