package gpu

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/ttftop/ttftop/bandwidth"
	"github.com/ttftop/ttftop/telemetry"
)

// TestRealNvidiaSMI runs against the machine's nvidia-smi when there is
// one (skipped elsewhere).
func TestRealNvidiaSMI(t *testing.T) {
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		t.Skip("no nvidia-smi")
	}
	c := &collector{}
	s := NewSMI(SMIConfig{Interval: 200 * time.Millisecond, EmitUnmapped: true}, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = s.Run(ctx)
	var samples int
	for _, o := range c.Take() {
		switch {
		case o.Kind == telemetry.KindSource:
			t.Logf("status: %s %s %v", o.Status.State, o.Status.Description, o.Status.Err)
			if o.Status.State == telemetry.Error {
				t.Fatalf("nvidia-smi failed: %s", o.Status.Err)
			}
		case o.Kind == telemetry.KindEndpoint:
			t.Logf("endpoint %s", o.Endpoint)
		case o.Signal == FBUsedMiB && o.Kind == telemetry.KindSample:
			samples++
		}
	}
	if samples == 0 {
		t.Fatal("no framebuffer samples")
	}
	out, err := exec.Command("nvidia-smi", "--query-gpu=name", "--format=csv,noheader").Output()
	if err == nil {
		g, ok := bandwidth.Lookup(string(out))
		t.Logf("GPU %q → %+v (%v)", out, g, ok)
	}
}
