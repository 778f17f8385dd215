package discover

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/sources/scrape/expo"
	"github.com/ttftop/ttftop/telemetry"
)

// Found is a candidate that answered like an LLM server.
type Found struct {
	URL    string // the server root, http://127.0.0.1:8000
	API    probe.API
	Engine telemetry.Engine
	Models []string
	// Metrics is true when its /metrics carries an engine's families.
	Metrics bool
	PID     int
	How     string
}

// Skipped is a candidate left alone, and why.
type Skipped struct {
	Candidate
	Why string
}

// apiFor is the protocol a candidate is listed and probed with: the
// engine's own where its OpenAI routes are not the way to list it.
func apiFor(e telemetry.Engine) probe.API {
	if e == telemetry.EngineTGI {
		return probe.TGI
	}
	return probe.OpenAIChat
}

// fingerprint asks a candidate, with GETs only, for its models and its
// /metrics. It counts as an LLM server only when it lists a model.
func fingerprint(ctx context.Context, c Candidate, metrics *httpclient.Client, timeout time.Duration, dial httpclient.DialFunc) (Found, error) {
	root := "http://" + c.HostPort()
	api := apiFor(c.Engine)
	p, err := probe.New(probe.Options{URL: root, API: api, Timeout: timeout, Dial: dial})
	if err != nil {
		return Found{}, err
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	models, err := p.ListModels(ctx)
	if err != nil {
		return Found{}, fmt.Errorf("not an LLM server: %w", err)
	}
	f := Found{URL: root, API: api, Engine: c.Engine, PID: c.PID, How: c.How}
	for _, m := range models {
		f.Models = append(f.Models, m.ID)
		if e := probe.GuessEngine(api, m.OwnedBy); e != telemetry.EngineUnknown && f.Engine == telemetry.EngineUnknown {
			f.Engine = e
		}
	}
	if det, ok := metricsEngine(ctx, metrics, root+"/metrics"); ok {
		f.Metrics = true
		if det.Engine != telemetry.EngineUnknown {
			f.Engine = det.Engine // the page is the surest sign
		}
	}
	return f, nil
}

// metricsEngine reads a /metrics page and detects whose it is; ok is
// false when there is no page or it carries no family the table knows.
func metricsEngine(ctx context.Context, c *httpclient.Client, url string) (engines.Detection, bool) {
	resp, err := c.Get(ctx, url, "text/plain")
	if err != nil {
		return engines.Detection{}, false
	}
	openMetrics, _, err := expo.FormatOf(http.Header{"Content-Type": resp.Header.Values("Content-Type")})
	if err != nil {
		return engines.Detection{}, false
	}
	page, err := expo.Parse(resp.Body, expo.Options{OpenMetrics: openMetrics, Want: func(string) bool { return false }})
	if err != nil {
		return engines.Detection{}, false
	}
	det := engines.Detect(page.Names)
	return det, len(det.Recognised) > 0 || det.Exporter != ""
}

// describe is one line about a found server.
func (f Found) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s, %d model", f.URL, f.Engine, len(f.Models))
	if len(f.Models) != 1 {
		b.WriteString("s")
	}
	if !f.Metrics {
		b.WriteString(", no /metrics")
	}
	fmt.Fprintf(&b, " (%s)", f.How)
	return b.String()
}
