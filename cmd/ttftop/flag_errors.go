package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagSynonym is the flag a name people reach for means ("" if none):
// an unknown one is answered with that flag when the command has it.
func flagSynonym(name string) string {
	switch name {
	case "alertmanager", "alertmanager-url":
		return "webhook"
	case "concurrency", "parallel":
		return "c"
	case "requests", "count", "num-requests":
		return "n"
	case "protocol":
		return "api"
	case "api-key", "token":
		return "api-key-env"
	}
	return ""
}

// flagError turns pflag's parse errors into usage errors (exit 2) and
// says which flag an unknown one probably meant: a renamed flag's new
// name, a synonym's flag, the nearest name, or the two-dash form of a
// long flag given with one dash (-json).
func flagError(renamed renamedFlags) func(*cobra.Command, error) error {
	return func(cmd *cobra.Command, err error) error {
		var ne *pflag.NotExistError
		if !errors.As(err, &ne) {
			return usageError{msg: err.Error()}
		}
		fs := cmd.Flags()
		if group := ne.GetSpecifiedShortnames(); group != "" {
			long, _, _ := strings.Cut(group, "=")
			if f := fs.Lookup(long); f != nil && len(long) > 1 {
				return usagef("%v (did you mean --%s? long flags take two dashes)", err, long)
			}
			return usageError{msg: err.Error()}
		}
		name := ne.GetSpecifiedName()
		if to, ok := renamed[name]; ok {
			return usagef("--%s was renamed %s", name, to)
		}
		if s := suggestFlag(fs, name); s != "" {
			return usagef("%v (did you mean %s?)", err, s)
		}
		return usageError{msg: err.Error()}
	}
}

// suggestFlag names the flag of fs that name most probably meant, as it
// is typed (-c, --interval), or "".
func suggestFlag(fs *pflag.FlagSet, name string) string {
	if to := flagSynonym(name); to != "" {
		if f := fs.Lookup(to); f != nil && !f.Hidden {
			return typed(f)
		}
	}
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	sort.Strings(names)
	best, bestD := "", 0
	for _, n := range names {
		// Within two edits, and few for a short name (--x is not -c).
		if d := editDistance(name, n); d <= 2 && 3*d <= len(name) && (best == "" || d < bestD) {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return typed(fs.Lookup(best))
}

// typed is a flag as a user types it: -c for a one-letter flag, --name
// otherwise.
func typed(f *pflag.Flag) string {
	if len(f.Name) == 1 && f.Shorthand == f.Name {
		return "-" + f.Name
	}
	return fmt.Sprintf("--%s", f.Name)
}

// editDistance is the Levenshtein distance of two short words.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
