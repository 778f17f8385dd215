package discover

import (
	"context"
	"net"
	"testing"
)

// BenchmarkLocalManyListeners is discovery's cost on a machine with
// thousands of listening sockets: this process opens 3000 on loopback
// (none an engine's), then each iteration reads /proc (both TCP tables,
// every process's command line), builds the candidates and fingerprints
// them (the default ports: on a shared machine some may answer).
func BenchmarkLocalManyListeners(b *testing.B) {
	const listeners = 3000
	for range listeners {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = l.Close() })
	}
	ctx := context.Background()
	b.Run("read+candidates", func(b *testing.B) {
		for b.Loop() {
			m, err := ReadMachine("/proc")
			if err != nil {
				b.Fatal(err)
			}
			if len(m.Listeners) < listeners {
				b.Fatalf("%d listeners read, want at least %d", len(m.Listeners), listeners)
			}
			_ = Candidates(m, DefaultPorts())
		}
	})
	b.Run("local", func(b *testing.B) {
		for b.Loop() {
			if _, err := Local(ctx, Options{DCGMPort: -1, LookPath: noNvidiaSMI}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
