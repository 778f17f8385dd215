// Package version reports ttftop's version: the value injected at build
// time with -ldflags "-X github.com/ttftop/ttftop/internal/version.Version=v1.2.3",
// else the module version recorded by the Go toolchain.
package version

import "runtime/debug"

// Version is set by the linker in release builds.
var Version = ""

// String returns the best known version and, when known, the VCS revision.
func String() string {
	if Version != "" {
		return Version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}
