package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/pflag"
)

// defaultDashboardProcs is GOMAXPROCS for the dashboard and the demo. Their
// work is many small wake-ups (token reads, timers, frames); with idle Ps
// each wake-up also wakes and spins another OS thread, which on a 2-core VM
// cost more than the work itself: `ttftop demo` at 160×50 measured 4.4 %
// of a core with 2 Ps and 3.0 % with 1 (bench/tui_bandwidth.sh).
// node_exporter defaults to one P for the same reason.
const defaultDashboardProcs = 1

// bindProcs adds --gomaxprocs to fs.
func bindProcs(fs *pflag.FlagSet) *int {
	return fs.Int("gomaxprocs", defaultDashboardProcs,
		"OS threads running Go code at once; 0 = one per CPU (raise it when probing hundreds of endpoints)")
}

// applyProcs sets GOMAXPROCS from --gomaxprocs after fs is parsed: an
// explicit flag wins, then the GOMAXPROCS environment variable, then the
// default.
func applyProcs(fs *pflag.FlagSet, n int) error {
	if n < 0 {
		return fmt.Errorf("--gomaxprocs must be 0 (one per CPU) or more, not %d", n)
	}
	explicit := false
	fs.Visit(func(f *pflag.Flag) { explicit = explicit || f.Name == "gomaxprocs" })
	if !explicit && os.Getenv("GOMAXPROCS") != "" {
		return nil
	}
	if n == 0 {
		runtime.SetDefaultGOMAXPROCS() // one per CPU, within any cgroup limit
		return nil
	}
	runtime.GOMAXPROCS(n)
	return nil
}
