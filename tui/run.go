package tui

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// termProfile is the colour depth TERM (and COLORTERM) promise. Inside
// tmux colorprofile asks tmux instead and ignores TERM, so a user who sets
// TERM=xterm for a 16-colour terminal outside tmux still got 256 colours:
// TERM is the user's word on what the outer terminal can show.
func termProfile(environ []string) colorprofile.Profile {
	env := make([]string, 0, len(environ))
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "TMUX=") {
			env = append(env, kv)
		}
	}
	return colorprofile.Env(env)
}

// Run runs the UI until the user quits or ctx is cancelled. Bubble Tea
// restores the terminal on every exit path (quit, cancel, panic). A nil
// in or out means the terminal (stdin/stdout, or the TTY).
func Run(ctx context.Context, m Model, in io.Reader, out io.Writer, extra ...tea.ProgramOption) error {
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithFPS(m.a.opts.FPS)}
	if in != nil {
		opts = append(opts, tea.WithInput(in))
	}
	if out != nil {
		opts = append(opts, tea.WithOutput(out))
	}
	switch {
	case m.a.noColor:
		// colorprofile ignores NO_COLOR values ParseBool rejects ("yes"):
		// force attributes-only output ourselves.
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	case out == nil:
		opts = append(opts, tea.WithColorProfile(termProfile(os.Environ())))
	}
	opts = append(opts, extra...)
	_, err := tea.NewProgram(m, opts...).Run()
	if err != nil && errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // cancelled from outside (signal): a normal exit
	}
	return err
}
