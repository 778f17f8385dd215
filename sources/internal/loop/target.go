package loop

import (
	"net/url"
	"strings"
	"time"

	"github.com/ttftop/ttftop/sources/httpclient"
)

// Defaults of every polled metrics page (an engine's /metrics, a
// dcgm-exporter), in one place.
const (
	DefaultPath     = "/metrics"
	DefaultInterval = time.Second
	DefaultJitter   = 0.1
	DefaultTimeout  = 3 * time.Second
)

// Target is the part of a polled source's configuration that every such
// source completes the same way; scrape.Config and gpu.Config copy their
// fields through it.
type Target struct {
	URL      string
	Path     string
	Interval time.Duration
	Jitter   float64
	HTTP     httpclient.Config
	Now      func() time.Time
}

// WithDefaults returns t with unset fields at their defaults. A URL that
// already ends in the path ("http://node:9400/metrics") names the page
// itself: the path is taken off the URL so that it is not appended twice,
// and both that form and the base URL reach the same page.
func (t Target) WithDefaults() Target {
	if t.Path == "" {
		t.Path = DefaultPath
	}
	if p := "/" + strings.Trim(t.Path, "/"); p != "/" {
		if u, err := url.Parse(t.URL); err == nil {
			if base, ok := strings.CutSuffix(strings.TrimRight(u.Path, "/"), p); ok {
				u.Path, u.RawPath = base, ""
				t.URL = u.String()
			}
		}
	}
	if t.Interval <= 0 {
		t.Interval = DefaultInterval
	}
	if t.Jitter <= 0 {
		t.Jitter = DefaultJitter
	}
	if t.HTTP.Timeout <= 0 {
		t.HTTP.Timeout = DefaultTimeout
	}
	t.HTTP = t.HTTP.WithDefaults()
	if t.Now == nil {
		t.Now = time.Now
	}
	return t
}
