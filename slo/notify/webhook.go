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

	"github.com/tokentop/tokentop/sanitize"
	"github.com/tokentop/tokentop/slo"
)

// WebhookOptions tune a webhook notifier; zero values take defaults.
type WebhookOptions struct {
	Timeout time.Duration // per attempt, default 5 s
	// Retries after the first attempt (default 3; negative = none), with
	// exponential backoff from Backoff (default 500 ms), capped at 30 s.
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
}

// Webhook posts Alertmanager-compatible alerts (a JSON array for
// /api/v2/alerts) when alerts fire or resolve, and re-sends firing ones.
type Webhook struct {
	url      *url.URL
	opts     WebhookOptions
	q        *queue[[]AMAlert]
	mu       sync.Mutex
	firing   map[alertKey]slo.Alert
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
	if opts.Retries == 0 {
		opts.Retries = 3
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 500 * time.Millisecond
	}
	if opts.ResendEvery == 0 {
		opts.ResendEvery = time.Minute
	}
	if opts.Client == nil {
		opts.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	w := &Webhook{url: u, opts: opts, firing: map[alertKey]slo.Alert{}}
	w.q = newQueue(opts.QueueSize, w.post)
	return w, nil
}

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
			w.firing[k] = tr.Alert
		} else {
			delete(w.firing, k)
		}
		sent[k] = true
		batch = append(batch, ToAlertmanager(tr.Alert, endsAt, w.opts.GeneratorURL))
	}
	if w.opts.ResendEvery > 0 && now.Sub(w.resentAt) >= w.opts.ResendEvery {
		w.resentAt = now
		for k, a := range w.firing {
			if !sent[k] {
				batch = append(batch, ToAlertmanager(a, endsAt, w.opts.GeneratorURL))
			}
		}
	}
	if len(batch) > 0 {
		w.q.push(batch)
	}
}

// errPermanent marks a failure a retry cannot fix (a 4xx answer).
var errPermanent = errors.New("not retried")

func (w *Webhook) post(ctx context.Context, alerts []AMAlert) error {
	body, err := json.Marshal(alerts)
	if err != nil {
		return err
	}
	wait := w.opts.Backoff
	for attempt := 0; ; attempt++ {
		err = w.attempt(ctx, body)
		if err == nil || errors.Is(err, errPermanent) || attempt >= w.opts.Retries || ctx.Err() != nil {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("webhook %s: %w (after %v)", w.url.Redacted(), ctx.Err(), err)
		case <-t.C:
		}
		wait = min(2*wait, 30*time.Second)
	}
	if err != nil {
		return fmt.Errorf("webhook %s: %w", w.url.Redacted(), err)
	}
	return nil
}

func (w *Webhook) attempt(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, w.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: %w", errPermanent, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "tokentop")
	if w.opts.Authorize != nil {
		if err := w.opts.Authorize(req); err != nil {
			return fmt.Errorf("credentials: %w", err)
		}
	}
	resp, err := w.opts.Client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the URL is named once, redacted, by post
		}
		return err
	}
	defer resp.Body.Close()
	snippet, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	msg := strings.TrimSpace(sanitize.Capped(string(snippet), 200))
	if rerr != nil {
		msg = rerr.Error()
	}
	err = fmt.Errorf("HTTP %d: %s", resp.StatusCode, msg)
	if resp.StatusCode/100 == 4 && resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusRequestTimeout {
		return fmt.Errorf("%w: %w", errPermanent, err)
	}
	return err
}

// Stats reports POSTs delivered, failed (after retries) and dropped.
func (w *Webhook) Stats() Stats { return w.q.stats() }

// Shutdown stops taking alerts and delivers what is queued until ctx ends.
func (w *Webhook) Shutdown(ctx context.Context) error { return w.q.shutdown(ctx) }
