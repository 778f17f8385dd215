package main

import (
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestApplyProcs(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs to tell the default from 1")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	cases := []struct {
		name string
		args []string
		env  string
		want int // 0: one per CPU
	}{
		{"default is one P", nil, "", 1},
		{"GOMAXPROCS env kept", nil, "2", 3},
		{"explicit flag beats env", []string{"--gomaxprocs", "2"}, "5", 2},
		{"zero means one per CPU", []string{"--gomaxprocs", "0"}, "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOMAXPROCS", tc.env)
			runtime.GOMAXPROCS(3) // a value none of the cases sets
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			fs.SetOutput(io.Discard)
			n := bindProcs(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if err := applyProcs(fs, *n); err != nil {
				t.Fatal(err)
			}
			got := runtime.GOMAXPROCS(0)
			want := tc.want
			if want == 0 {
				runtime.SetDefaultGOMAXPROCS()
				want = runtime.GOMAXPROCS(0)
			}
			if got != want {
				t.Fatalf("GOMAXPROCS = %d, want %d", got, want)
			}
		})
	}
}

func TestApplyProcsRejectsNegative(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	n := bindProcs(fs)
	if err := fs.Parse([]string{"--gomaxprocs", "-1"}); err != nil {
		t.Fatal(err)
	}
	before := runtime.GOMAXPROCS(0)
	if err := applyProcs(fs, *n); err == nil || !strings.Contains(err.Error(), "--gomaxprocs") {
		t.Fatalf("applyProcs(-1) = %v, want an error naming the flag", err)
	}
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("GOMAXPROCS changed to %d on a bad flag", got)
	}
}
