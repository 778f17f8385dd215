//go:build integration

package monitor

import "testing"

// TestTwoSimulatedFaultsNamed is the fault suite's small version, run by
// default: two faults (slow prefill, an outage) and the untouched model,
// three engines in all, in real time, with no bound in evaluations after
// pending (TestEachSimulatedCauseNamed has it): each cause must be named with its evidence within
// 30 s of the fault, and the untouched model names none throughout.
func TestTwoSimulatedFaultsNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three simulated engines for about 30 s")
	}
	var two []injected
	for _, f := range diagFaults() {
		if f.model == "prefill" || f.model == "outage" {
			two = append(two, f)
		}
	}
	injectFaults(t, two, false)
}
