package record

import (
	"slices"
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

// The seek preamble keeps one value per track, and a track is what the
// store keys it by: endpoint, signal and source kind (telemetry.SourceKind).
// Two scrape URLs feed one track, so only the later value is kept; a probe
// is another track.
func TestStateKeepsOneValuePerStoreTrack(t *testing.T) {
	var s stateLines
	sample := func(source string, v float64) telemetry.Observation {
		return telemetry.Observation{Kind: telemetry.KindSample, Endpoint: "ep", Signal: telemetry.Running, Source: source, Value: v}
	}
	s.update(sample("scrape:http://a:8000/metrics", 1), []byte("a"))
	s.update(sample("scrape:http://b:8000/metrics", 2), []byte("b"))
	s.update(sample("probe:http://a:8000", 3), []byte("c"))
	var got []string
	for _, l := range s.lines() {
		got = append(got, string(l))
	}
	if !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("kept %q, want the later scrape and the probe: [b c]", got)
	}
	if telemetry.SourceKindOf("scrape:http://a:8000/metrics") != "scrape" {
		t.Error("telemetry's source kind changed: the preamble's track keys must follow it")
	}
}
