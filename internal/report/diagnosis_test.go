package report

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/internal/syncbuf"
	"github.com/ttftop/ttftop/telemetry"
)

// With diagnoses, every endpoint carries "diagnosis": its findings, or
// null when not yet diagnosed; without, the document is as before.
func TestDocumentCarriesDiagnosis(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	snap := telemetry.Snapshot{At: at, Window: time.Minute, Endpoints: []telemetry.EndpointSnapshot{
		{Endpoint: telemetry.Endpoint{Name: "a"}}, {Endpoint: telemetry.Endpoint{Name: "b"}}}}
	gap := 300.0
	doc := Build(snap, nil)
	doc.Diagnosis = map[string]diagnosis.Diagnosis{"a": {Endpoint: "a", At: at,
		Causes:        []diagnosis.Finding{{Cause: diagnosis.Network, Summary: "network", Since: at}},
		Decomposition: diagnosis.Decomposition{NetworkMs: &gap}}}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, doc); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Endpoints []struct {
			Name      string
			Diagnosis *struct {
				Causes        []struct{ Cause string }
				Decomposition struct {
					NetworkMs *float64 `json:"network_ms"`
				}
			}
		}
		WindowMS float64 `json:"window_ms"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Endpoints) != 2 || got.WindowMS != 60000 {
		t.Fatalf("document %s", buf.String())
	}
	a, b := got.Endpoints[0], got.Endpoints[1]
	if a.Diagnosis == nil || a.Diagnosis.Causes[0].Cause != "network" || *a.Diagnosis.Decomposition.NetworkMs != 300 {
		t.Errorf("a: %s", buf.String())
	}
	if b.Diagnosis != nil || !strings.Contains(buf.String(), `"diagnosis": null`) {
		t.Errorf("b (not diagnosed) should read null: %s", buf.String())
	}

	buf.Reset()
	if err := WriteJSON(&buf, Build(snap, nil)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "diagnosis") {
		t.Errorf("without diagnoses: %s", buf.String())
	}
}

type fixedReader telemetry.Snapshot

func (f fixedReader) Snapshot(time.Time, time.Duration) telemetry.Snapshot {
	return telemetry.Snapshot(f)
}

type fixedDiagnosis map[string]diagnosis.Diagnosis

func (f fixedDiagnosis) Latest() map[string]diagnosis.Diagnosis { return f }

// The dashboard's --json lines carry each endpoint's diagnosis.
func TestLoopLinesCarryDiagnosis(t *testing.T) {
	snap := telemetry.Snapshot{Endpoints: []telemetry.EndpointSnapshot{{Endpoint: telemetry.Endpoint{Name: "a"}}}}
	diag := fixedDiagnosis{"a": {Endpoint: "a", Causes: []diagnosis.Finding{{Cause: diagnosis.Queueing}}}}
	var out syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- LoopWithDiagnosis(ctx, &out, fixedReader(snap), nil, diag, time.Millisecond, time.Minute, true)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "\n") && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(out.String(), "\n")
	if !strings.Contains(line, `"diagnosis":{"at":`) || !strings.Contains(line, `"cause":"queueing"`) {
		t.Errorf("line %s", line)
	}
}
