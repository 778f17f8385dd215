package monitor

import (
	"context"
	"errors"
	"net/http"

	"github.com/tokentop/tokentop/config"
	"github.com/tokentop/tokentop/slo"
	"github.com/tokentop/tokentop/slo/notify"
	"github.com/tokentop/tokentop/sources/httpclient"
)

// AddNotifications wires the configured --on-alert command and webhook to
// alert transitions. The returned shutdown delivers what is queued.
func (m *Monitor) AddNotifications(n config.Notify) (shutdown func(context.Context) error, err error) {
	var ns notify.Notifiers
	var stops []func(context.Context) error
	if len(n.OnAlert) > 0 {
		x, err := notify.NewExec(n.OnAlert, notify.ExecOptions{})
		if err != nil {
			return nil, err
		}
		ns = append(ns, x)
		stops = append(stops, x.Shutdown)
	}
	if w := n.Webhook; w != nil && w.URL != "" {
		cfg := HTTPConfig(w.Auth)
		wh, err := notify.NewWebhook(w.URL, notify.WebhookOptions{Timeout: w.Timeout.D(),
			Authorize: func(r *http.Request) error { return authorize(r, cfg) }})
		if err != nil {
			return nil, err
		}
		ns = append(ns, wh)
		stops = append(stops, wh.Shutdown)
	}
	if len(ns) > 0 {
		m.OnTransitions(func(trs []slo.Transition) { ns.Notify(m.opts.Now(), trs) })
	}
	return func(ctx context.Context) error {
		var errs []error
		for _, s := range stops {
			errs = append(errs, s(ctx))
		}
		return errors.Join(errs...)
	}, nil
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
