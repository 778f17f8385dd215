package main

import "github.com/tokentop/tokentop/sources/probe"

// The probe subcommand lives in sources/probe (probe.Main) so that its
// tests run with the package; this file only registers it.
func init() {
	register(command{name: "probe", summary: probe.Summary, run: probe.Main})
}
