//go:build integration

package tui

// sweepStep is the width step of the resize sweeps under -tags
// integration: every width.
const sweepStep = 1
