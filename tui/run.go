package tui

import (
	"context"
	"errors"
	"io"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

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
	if m.a.noColor {
		// colorprofile ignores NO_COLOR values ParseBool rejects ("yes"):
		// force attributes-only output ourselves.
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	opts = append(opts, extra...)
	_, err := tea.NewProgram(m, opts...).Run()
	if err != nil && errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // cancelled from outside (signal): a normal exit
	}
	return err
}
