package monitor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/slo/notify"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/telemetry"
)

// NotifyOptions tune AddNotifications; the zero value suits a TUI.
type NotifyOptions struct {
	// Log, when set (headless commands: nothing else shows the header),
	// gets one line when a notifier starts failing, each time it gives up
	// on a notification, and when it delivers again.
	Log io.Writer
	// Retries and Backoff override the notifiers' retry policy (tests);
	// zero = the defaults (notify.DefaultRetries, notify.DefaultBackoff).
	Retries int
	Backoff time.Duration
	// ResendTick is how often firing alerts are offered to webhooks for
	// their periodic re-send (default 10 s), also when no alert changes;
	// ResendEvery is the re-send period (default 1 m; tests shorten both).
	ResendTick, ResendEvery time.Duration
}

// deliverer is what every notifier offers besides Notify.
type deliverer interface {
	notify.Notifier
	Name() string
	Stats() notify.Stats
	Shutdown(context.Context) error
}

// Notifications are the configured notifiers, started.
type Notifications struct {
	ds       []deliverer
	ns       notify.Notifiers
	log      *notifyLog
	webhook  bool
	stopTick func()
}

// StartNotifications starts the configured --on-alert command and webhook
// (none configured: an empty, usable set). Each notifier's delivery health
// goes to sink (when not nil) as a source status of kind "notify", and to
// opts.Log.
func StartNotifications(n config.Notify, sink telemetry.Sink, opts NotifyOptions) (*Notifications, error) {
	nt := &Notifications{log: &notifyLog{w: opts.Log}, stopTick: func() {}}
	report := nt.reporter(sink)
	if len(n.OnAlert) > 0 {
		x, err := notify.NewExec(n.OnAlert, notify.ExecOptions{Retries: opts.Retries, Backoff: opts.Backoff, Report: report})
		if err != nil {
			return nil, err
		}
		nt.add(x)
	}
	if w := n.Webhook; w != nil && w.URL != "" {
		cfg := w.Auth.Config()
		wh, err := notify.NewWebhook(w.URL, notify.WebhookOptions{Timeout: w.Timeout.D(), Retries: opts.Retries, Backoff: opts.Backoff, ResendEvery: opts.ResendEvery,
			Report: report, Authorize: func(r *http.Request) error { return authorize(r, cfg) }})
		if err != nil {
			return nil, errors.Join(err, nt.Shutdown(context.Background()))
		}
		nt.add(wh)
		nt.webhook = true
	}
	return nt, nil
}

func (nt *Notifications) add(d deliverer) {
	nt.ds = append(nt.ds, d)
	nt.ns = append(nt.ns, d)
}

// Empty reports whether no notifier is configured.
func (nt *Notifications) Empty() bool { return len(nt.ds) == 0 }

// Notify hands transitions to every notifier; it never blocks.
func (nt *Notifications) Notify(now time.Time, trs []slo.Transition) { nt.ns.Notify(now, trs) }

// Shutdown delivers what is queued until ctx ends. Its error names every
// notifier that left notifications undelivered, with the count and the
// last error.
func (nt *Notifications) Shutdown(ctx context.Context) error {
	nt.stopTick()
	return errors.Join(shutdownAll(ctx, nt.ds), nt.log.err())
}

// AddNotifications starts the configured notifiers on m's alert
// transitions, their health into m's store (the header's sources line,
// snapshots, recordings), and a tick for webhooks' re-sends. Shut them
// down after Run returns.
func (m *Monitor) AddNotifications(n config.Notify, opts NotifyOptions) (*Notifications, error) {
	nt, err := StartNotifications(n, m, opts)
	if err != nil || nt.Empty() {
		return nt, err
	}
	m.OnTransitions(func(trs []slo.Transition) { nt.Notify(m.opts.Now(), m.explained(trs)) })
	if nt.webhook {
		nt.stopTick = m.resendTicker(nt.ns, opts.ResendTick)
	}
	return nt, nil
}

// explained is trs with the diagnosis of each alert's endpoint that
// names a cause, as notifications carry it (cause, evidence). Transitions
// come after the evaluation's diagnosis (EvaluateNow), so it is the same
// instant's. A resolved alert gets none: its endpoint may be unwell for
// another reason since.
func (m *Monitor) explained(trs []slo.Transition) []slo.Transition {
	latest := m.Diagnosis.Latest()
	out := make([]slo.Transition, len(trs))
	for i, tr := range trs {
		if d, ok := latest[tr.Alert.Endpoint]; ok && d.Named() && tr.To != slo.Resolved {
			tr.Why = d.Why()
		}
		out[i] = tr
	}
	return out
}

// resendTicker offers the notifiers a tick (no transitions) periodically,
// so a webhook re-sends alerts that keep firing: Alertmanager resolves an
// alert whose endsAt passes without a re-send.
func (m *Monitor) resendTicker(ns notify.Notifiers, every time.Duration) (stop func()) {
	if every <= 0 {
		every = 10 * time.Second
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				ns.Notify(m.opts.Now(), nil)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}

// shutdownAll drains every notifier until ctx ends and says which left
// notifications undelivered.
func shutdownAll(ctx context.Context, ds []deliverer) error {
	// The notifiers shut down one after another under one deadline; each
	// measures the grace at its own start, so a later one would name what
	// was left of it rather than the grace that was given.
	var grace time.Duration
	if dl, ok := ctx.Deadline(); ok {
		grace = time.Until(dl)
	}
	var errs []error
	for _, d := range ds {
		serr := d.Shutdown(ctx)
		if ge, ok := errors.AsType[*notify.GraceError](serr); ok && grace > 0 {
			ge.Grace = grace
		}
		s := d.Stats()
		if n := s.Undelivered(); n > 0 {
			msg := fmt.Sprintf("%s: %d of %d %s undelivered", d.Name(), n, n+s.Sent, plural(n+s.Sent, "notification"))
			if s.LastError != "" {
				msg += " (last error: " + s.LastError + ")"
			}
			if serr != nil {
				// What the exit grace cut short: "the 5s exit grace cut
				// delivery short after attempt 3 of 4".
				msg += "; " + serr.Error()
			}
			errs = append(errs, errors.New(msg))
		} else if serr != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.Name(), serr))
		}
	}
	return errors.Join(errs...)
}

func plural(n uint64, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// notifyLog is where headless commands say notification trouble; the
// first write error is kept for the shutdown's error, since a log that
// cannot be written has nowhere else to say so.
type notifyLog struct {
	w        io.Writer // nil: no log (a TUI owns the terminal)
	mu       sync.Mutex
	writeErr error
}

func (l *notifyLog) printf(format string, args ...any) {
	if l.w == nil {
		return
	}
	l.mu.Lock() // several notifiers' workers share the log
	defer l.mu.Unlock()
	if _, err := fmt.Fprintf(l.w, format, args...); err != nil && l.writeErr == nil {
		l.writeErr = fmt.Errorf("notification log: %w", err)
	}
}

func (l *notifyLog) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writeErr
}

// reporter turns a notifier's health reports into source statuses
// in the store, and lines in log at the moments a human must hear of: the
// first failure of a streak, every notification given up, and delivery
// working again.
func (nt *Notifications) reporter(sink telemetry.Sink) func(notify.Health) {
	log := nt.log
	return func(h notify.Health) {
		st := &telemetry.SourceStatus{Name: h.Notifier, Kind: telemetry.SourceNotify, State: telemetry.Live, LastOK: h.LastOK,
			Failures: h.ConsecutiveFailures}
		if h.Failing() {
			st.State, st.Err = telemetry.Error, h.Detail()
		}
		if sink != nil {
			sink.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: h.At, Source: telemetry.SourceNotify.At(h.Notifier), Status: st})
		}
		switch {
		case h.Outcome == notify.GaveUp, h.Outcome == notify.Retrying && h.ConsecutiveFailures == 1:
			log.printf("ttftop: %s failing: %s\n", h.Notifier, h.Detail())
		case h.Outcome == notify.Recovered:
			log.printf("ttftop: %s delivering again\n", h.Notifier)
		}
	}
}

// authorize adds the configured credentials to one request, re-reading
// token files each time so rotated secrets work.
func authorize(r *http.Request, c httpclient.Config) error {
	if !c.BearerToken.IsZero() {
		tok, err := c.BearerToken.Fetch()
		if err != nil {
			return err
		}
		r.Header.Set("Authorization", "Bearer "+tok.Reveal())
	}
	for k, v := range c.Headers {
		val, err := v.Fetch()
		if err != nil {
			return err
		}
		r.Header.Set(k, val.Reveal())
	}
	return nil
}
