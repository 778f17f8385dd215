package diagnosis

import "testing"

func TestEvidenceWords(t *testing.T) {
	base := 40.0
	f := Finding{Evidence: []Evidence{
		{Figure: "queue_time_ms", Stat: "mean", Value: 812, Unit: "ms", Baseline: &base, BaselineFrom: "own"},
		{Figure: "mbu", Stat: "value", Value: 31, Unit: "%", Approx: true},
		{Figure: "error_rate", Stat: "value", Value: 100, Unit: "%", Note: "3 of 3 probes failed"},
	}}
	want := "queue_time_ms mean 812ms vs 40ms (own); mbu value ~31%; error_rate value 100%: 3 of 3 probes failed"
	if got := f.EvidenceWords(); got != want {
		t.Fatalf("EvidenceWords:\n got %q\nwant %q", got, want)
	}
	if (Diagnosis{Causes: []Finding{{Cause: None}}}).Named() || !(Diagnosis{Causes: []Finding{{Cause: Queueing}}}).Named() {
		t.Fatal("Named: healthy is not named, queueing is")
	}
}
