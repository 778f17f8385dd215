package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"

	"github.com/ttftop/ttftop/internal/version"
)

func init() {
	register(command{name: "version", summary: "print the version", run: runVersion})
}

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "ttftop version", stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("version takes no arguments (got %q)", fs.Args())
	}
	fmt.Fprintf(stdout, "ttftop %s (%s, %s/%s)\n", version.String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// newFlagSet returns a flag set that reports errors instead of exiting and,
// for --help, prints a usage line before the flags. A usage error is not
// followed by the whole usage: main says it in one line, with a pointer
// to --help, and exits 2.
func newFlagSet(name, usageLine string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	out := &errorNoted{w: stderr}
	fs.SetOutput(out)
	fs.Usage = func() {
		if out.noted {
			out.noted = false // the error itself is returned and said by main
			return
		}
		fmt.Fprintf(stderr, "Usage: %s\n\nFlags:\n", usageLine)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		fs.SetOutput(out)
	}
	return fs
}

// errorNoted swallows what the flag package prints before calling Usage
// on an error (the error, which the caller returns), and remembers it.
type errorNoted struct {
	w     io.Writer
	noted bool
}

func (e *errorNoted) Write(p []byte) (int, error) {
	e.noted = true
	return len(p), nil
}
