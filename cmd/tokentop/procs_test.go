package main

import (
	"flag"
	"io"
	"runtime"
	"testing"
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
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			n := bindProcs(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			applyProcs(fs, *n)
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
