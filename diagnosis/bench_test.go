package diagnosis

import (
	"fmt"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// BenchmarkUpdateFleet is one refresh's diagnosis of a 500-endpoint fleet
// with every figure present (the snapshot itself is the store's cost).
func BenchmarkUpdateFleet(b *testing.B) {
	eps := make([]telemetry.EndpointSnapshot, 500)
	for i := range eps {
		eps[i] = endpoint(fmt.Sprintf("host-%d/model", i), healthy())
	}
	d := New(Config{})
	now := t0
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		d.Update(telemetry.Snapshot{At: now, Endpoints: eps}, nil)
		now = now.Add(time.Second)
	}
}
