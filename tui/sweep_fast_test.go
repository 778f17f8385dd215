//go:build !integration

package tui

// sweepStep is the width step of the resize sweeps in the fast set: every
// 7th width keeps `go test ./...` quick (the sweeps are CPU-bound, tens of
// seconds on a loaded 2-core machine); the integration run (CI) sweeps
// every width (sweep_full_integration_test.go).
const sweepStep = 7
