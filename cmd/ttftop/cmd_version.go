package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/internal/version"
)

func versionCommand() command {
	return command{name: "version", summary: "print the version", usage: "ttftop version", bind: runVersion}
}

func runVersion(fs *pflag.FlagSet) runFunc {
	return func(_ context.Context, args []string, stdout, _ io.Writer) error {
		if len(args) > 0 {
			return usagef("version takes no arguments (got %q)", args)
		}
		fmt.Fprintf(stdout, "ttftop %s (%s, %s/%s)\n", version.String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	}
}
