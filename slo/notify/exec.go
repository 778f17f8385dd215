package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/slo"
)

// ExecOptions tune a command notifier; zero values take defaults.
type ExecOptions struct {
	Timeout   time.Duration // per run, default 10 s; the command is killed after it
	QueueSize int           // default DefaultQueueSize
	// Retries after a run that fails (exits non-zero, or is killed at
	// Timeout): default DefaultRetries, negative = none; the same event is
	// passed again, after Backoff (default DefaultBackoff) doubling.
	Retries int
	Backoff time.Duration
	// Report, when set, receives the delivery health after each run.
	Report func(Health)
}

// Exec runs a command for each alert that fires or resolves (--on-alert),
// with the Event as JSON on stdin. The command is an argv fixed by the
// user: alert text (objective, endpoint and model names, which come from
// the network) only ever travels as data on stdin and in environment
// variables, never through a shell or into the argument list.
type Exec struct {
	name    string
	argv    []string
	timeout time.Duration
	q       *queue[execJob]
}

type execJob struct {
	ev      Event
	payload []byte
}

// NewExec checks argv and starts the worker. The program is looked up now,
// so a typo fails at start rather than at the first alert.
func NewExec(argv []string, opts ExecOptions) (*Exec, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("on-alert: no command")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("on-alert: %w", err)
	}
	x := &Exec{name: "on-alert " + sanitize.Text(argv[0]), argv: append([]string{path}, argv[1:]...), timeout: opts.Timeout}
	if x.timeout <= 0 {
		x.timeout = 10 * time.Second
	}
	x.q = newQueue(queueOptions{name: x.name, size: opts.QueueSize, retry: newRetryPolicy(opts.Retries, opts.Backoff),
		report: opts.Report}, x.run)
	return x, nil
}

// Name says which notifier this is: "on-alert ./hook.sh".
func (x *Exec) Name() string { return x.name }

// Notify queues one run per notable transition; it never blocks.
func (x *Exec) Notify(_ time.Time, trs []slo.Transition) {
	for _, tr := range trs {
		if !notable(tr) {
			continue
		}
		ev := newEvent(tr)
		b, err := json.Marshal(ev)
		if err != nil {
			// An Alert always marshals; count it rather than lose it silently.
			x.q.failed.Add(1)
			continue
		}
		x.q.push(execJob{ev: ev, payload: b})
	}
}

func (x *Exec) run(ctx context.Context, job execJob) error {
	ctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	ev := job.ev
	cmd := exec.CommandContext(ctx, x.argv[0], x.argv[1:]...)
	cmd.Stdin = bytes.NewReader(job.payload)
	cmd.Stdout = io.Discard // the terminal belongs to the TUI
	stderr := &tailBuffer{max: 512}
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(),
		"TTFTOP_ALERT_STATUS="+ev.Status,
		"TTFTOP_ALERT_OBJECTIVE="+ev.Alert.Objective,
		"TTFTOP_ALERT_ENDPOINT="+ev.Alert.Endpoint,
		"TTFTOP_ALERT_SEVERITY="+ev.Alert.Severity,
	)
	// Output pipes held open by a grandchild must not hang the worker.
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			return fmt.Errorf("%w: %s", err, sanitize.Capped(msg, 256))
		}
		return err
	}
	return nil
}

// Stats reports runs done, failed (after retries), retried and dropped.
func (x *Exec) Stats() Stats { return x.q.stats() }

// Shutdown stops taking alerts, finishes queued runs until ctx ends, then
// kills what still runs.
func (x *Exec) Shutdown(ctx context.Context) error { return x.q.shutdown(ctx) }

// tailBuffer keeps the last max bytes written: enough of a failing
// command's stderr to say why, bounded whatever it prints.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }
