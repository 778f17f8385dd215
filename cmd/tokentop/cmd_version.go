package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"

	"github.com/tokentop/tokentop/internal/version"
)

func init() {
	register(command{name: "version", summary: "print the version", run: runVersion})
}

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "tokentop version", stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "tokentop %s (%s, %s/%s)\n", version.String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints a usage line before the flags.
func newFlagSet(name, usageLine string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s\n\nFlags:\n", usageLine)
		fs.PrintDefaults()
	}
	return fs
}
