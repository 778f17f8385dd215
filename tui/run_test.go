package tui

import (
	"testing"

	"github.com/charmbracelet/colorprofile"
)

// Inside tmux, TERM still decides the colour depth.
func TestTermProfileInsideTmux(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want colorprofile.Profile
	}{
		{[]string{"TERM=xterm", "TMUX=/tmp/tmux-0/default,1,0"}, colorprofile.ANSI},
		{[]string{"TERM=tmux-256color", "TMUX=/tmp/tmux-0/default,1,0"}, colorprofile.ANSI256},
		{[]string{"TERM=xterm-256color"}, colorprofile.ANSI256},
	} {
		if got := termProfile(tc.env); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.env, got, tc.want)
		}
	}
}
