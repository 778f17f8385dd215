package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/slo"
)

// WebhookOptions tune a webhook notifier; zero values take defaults.
type WebhookOptions struct {
	Timeout time.Duration // per attempt, default 5 s
	// Retries after the first attempt (default DefaultRetries; negative =
	// none), with exponential backoff from Backoff (default
	// DefaultBackoff), capped at DefaultMaxBackoff.
	Retries int
	Backoff time.Duration
	// ResendEvery re-sends firing alerts, as Alertmanager's clients must
	// (it resolves an alert whose endsAt passes); endsAt is set 4 periods
	// ahead, as Prometheus does. Default 1 m; negative disables.
	ResendEvery  time.Duration
	QueueSize    int
	GeneratorURL string
	// Client defaults to one that verifies TLS and follows no redirects,
	// so credentials never travel to another host.
	Client *http.Client
	// Authorize, when set, adds credentials to each attempt (re-reading a
	// token file each time, so rotated secrets work).
	Authorize func(*http.Request) error
	// Report, when set, receives the delivery health after each attempt.
	Report func(Health)
}

// Webhook posts Alertmanager-compatible alerts (a JSON array for
// /api/v2/alerts) when alerts fire or resolve, and re-sends firing ones.
type Webhook struct {
	url      *url.URL
	name     string
	opts     WebhookOptions
	q        *queue[[]AMAlert]
	mu       sync.Mutex
	firing   map[alertKey]slo.Transition // as it fired: a re-send keeps its cause
	resentAt time.Time
}

type alertKey struct{ objective, endpoint, severity string }

func keyOf(a slo.Alert) alertKey { return alertKey{a.Objective, a.Endpoint, a.Severity} }

// NewWebhook checks the URL and starts the worker.
func NewWebhook(rawURL string, opts WebhookOptions) (*Webhook, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("webhook: %q is not an http(s) URL", sanitize.Text(rawURL))
	}
	if u.User != nil {
		return nil, fmt.Errorf("webhook %s: credentials in URLs are not allowed", u.Redacted())
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.ResendEvery == 0 {
		opts.ResendEvery = time.Minute
	}
	if opts.Client == nil {
		opts.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	w := &Webhook{url: u, name: "webhook " + displayURL(u), opts: opts, firing: map[alertKey]slo.Transition{}}
	w.q = newQueue(queueOptions{name: w.name, size: opts.QueueSize, retry: newRetryPolicy(opts.Retries, opts.Backoff),
		report: opts.Report}, w.post)
	return w, nil
}

// displayURL is the URL as shown and logged: scheme, host and path only,
// since a query string may carry a token.
func displayURL(u *url.URL) string {
	return sanitize.Text((&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String())
}

// Name says which notifier this is: "webhook http://host:9093/api/v2/alerts".
func (w *Webhook) Name() string { return w.name }

// Notify queues one POST with the alerts that fired or resolved, plus the
// firing ones due for a re-send; it never blocks.
func (w *Webhook) Notify(now time.Time, trs []slo.Transition) {
	w.mu.Lock()
	defer w.mu.Unlock()
	endsAt := now.Add(4 * max(w.opts.ResendEvery, time.Minute))
	var batch []AMAlert
	sent := map[alertKey]bool{}
	for _, tr := range trs {
		if !notable(tr) {
			continue
		}
		k := keyOf(tr.Alert)
		if tr.To == slo.Firing {
			w.firing[k] = tr
		} else {
			delete(w.firing, k)
		}
		sent[k] = true
		batch = append(batch, ToAlertmanager(tr.Alert, tr.Why, endsAt, w.opts.GeneratorURL))
	}
	if w.opts.ResendEvery > 0 && now.Sub(w.resentAt) >= w.opts.ResendEvery {
		w.resentAt = now
		for k, tr := range w.firing {
			if !sent[k] {
				batch = append(batch, ToAlertmanager(tr.Alert, tr.Why, endsAt, w.opts.GeneratorURL))
			}
		}
	}
	if len(batch) > 0 {
		w.q.push(batch)
	}
}

// post is one delivery attempt; the queue retries it.
func (w *Webhook) post(ctx context.Context, alerts []AMAlert) error {
	body, err := json.Marshal(alerts)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPermanent, err)
	}
	return w.attempt(ctx, body)
}

func (w *Webhook) attempt(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, w.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPermanent, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ttftop")
	if w.opts.Authorize != nil {
		if err := w.opts.Authorize(req); err != nil {
			return fmt.Errorf("credentials: %w", err)
		}
	}
	resp, err := w.opts.Client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the notifier's name says the URL, redacted
		}
		return err
	}
	defer resp.Body.Close()
	snippet, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	msg := sanitize.Capped(strings.TrimSpace(string(snippet)), 200)
	if rerr != nil {
		msg = rerr.Error()
	}
	text := http.StatusText(resp.StatusCode)
	if msg != "" && !strings.EqualFold(msg, text) {
		text += ": " + msg
	}
	err = fmt.Errorf("HTTP %d %s", resp.StatusCode, text)
	// The receiver rejected the payload itself: the same body would be
	// rejected again. Anything else (a wrong path during a deploy, expired
	// credentials about to be rotated, overload) may pass next time.
	switch resp.StatusCode {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return fmt.Errorf("%w: %w", ErrPermanent, err)
	}
	return err
}

// Stats reports POSTs delivered, failed (after retries), retried and dropped.
func (w *Webhook) Stats() Stats { return w.q.stats() }

// Shutdown stops taking alerts and delivers what is queued until ctx ends.
func (w *Webhook) Shutdown(ctx context.Context) error { return w.q.shutdown(ctx) }
