package table

import (
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

func ptr(v float64) *float64 { return &v }

// A probed endpoint whose probes fail shows the failure, never the
// engine's figure; the v key shows the engine's own figures, and the SRC
// cell says whose they are.
func TestRowSides(t *testing.T) {
	ep := telemetry.EndpointSnapshot{
		Endpoint: telemetry.Endpoint{Name: "h:8000/m"},
		Signals: map[telemetry.Signal]telemetry.SignalSnapshot{
			telemetry.TTFT:    {Unit: "ms", State: telemetry.Error, Err: "http_status: 503", Source: "probe:http://h:8000"},
			telemetry.KVCache: {Unit: "%", Value: ptr(40), State: telemetry.Live, Source: "scrape:http://h:8000/metrics"},
		},
		Server: map[telemetry.Signal]telemetry.SignalSnapshot{
			telemetry.TTFT: {Unit: "ms", P50: ptr(15.5), P99: ptr(20), State: telemetry.Live, Source: "scrape:http://h:8000/metrics"},
		},
	}
	client := Row{Endpoint: ep}
	if s, ok := client.Sig(telemetry.TTFT); !ok || s.State != telemetry.Error || s.P50 != nil {
		t.Errorf("client view TTFT %+v", s)
	}
	if got := client.SourceMark(); got != "probe" {
		t.Errorf("client SRC %q", got)
	}
	server := Row{Endpoint: ep, Server: true}
	if s, ok := server.Sig(telemetry.TTFT); !ok || s.P50 == nil || *s.P50 != 15.5 {
		t.Errorf("server view TTFT %+v", s)
	}
	if s, ok := server.Sig(telemetry.TPOT); ok {
		t.Errorf("server view without an engine TPOT shows %+v", s)
	}
	if s, ok := server.Sig(telemetry.KVCache); !ok || *s.Value != 40 {
		t.Errorf("server-only signals stay: %+v", s)
	}
	if got := server.SourceMark(); got != "server" {
		t.Errorf("server SRC %q", got)
	}
}
