package sshhost

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestResolveAsSSHDoes: the first value obtained wins (the command
// line's first), Host patterns match with * and !, IdentityFile
// accumulates, ~ is HOME, and what is not set has ssh's defaults.
func TestResolveAsSSHDoes(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	conf := `# comment
Host gpu-* !gpu-test
    HostName 10.1.2.3
    User=ops
    Port 2222
    IdentityFile ~/.ssh/gpu_key
    UserKnownHostsFile ~/.ssh/gpu_hosts
Host *
    User fallback
    Port 22
    IdentityFile ~/.ssh/id_other
`
	if err := os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Resolve(Target{Alias: "gpu-7", Port: 2200}, home)
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{HostName: "10.1.2.3", User: "ops", Port: 2200,
		IdentityFiles: []string{filepath.Join(home, ".ssh/gpu_key"), filepath.Join(home, ".ssh/id_other")},
		KnownHosts:    []string{filepath.Join(home, ".ssh/gpu_hosts")}}
	if s.HostName != want.HostName || s.User != want.User || s.Port != want.Port ||
		!slices.Equal(s.IdentityFiles, want.IdentityFiles) || !slices.Equal(s.KnownHosts, want.KnownHosts) {
		t.Errorf("gpu-7: got %+v, want %+v", s, want)
	}
	s, err = Resolve(Target{Alias: "gpu-test"}, home)
	if err != nil {
		t.Fatal(err)
	}
	if s.HostName != "gpu-test" || s.User != "fallback" || s.Port != 22 || s.KnownHosts[0] != filepath.Join(home, ".ssh/known_hosts") {
		t.Errorf("gpu-test (negated): got %+v", s)
	}
}

func TestParseTarget(t *testing.T) {
	tg, err := ParseTarget("ssh://ops@gpu-1:2222")
	if err != nil || tg != (Target{User: "ops", Alias: "gpu-1", Port: 2222}) || tg.String() != "ssh://ops@gpu-1:2222" {
		t.Errorf("got %+v, %v", tg, err)
	}
	for _, bad := range []string{"http://gpu-1", "ssh://", "ssh://gpu-1/path", "ssh://gpu-1:99999"} {
		if _, err := ParseTarget(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
