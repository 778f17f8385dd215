package promql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/sources/httpclient"
)

// maxErrLen caps an error message shown in the UI.
const maxErrLen = 300

// maxDetailLen caps the part of a response body quoted in a message.
const maxDetailLen = 160

var (
	htmlTitleRE = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
	htmlTagRE   = regexp.MustCompile(`(?s)<[^>]*>`)
	spaceRE     = regexp.MustCompile(`\s+`)
)

// describeError turns a query error into one clear line: credentials
// scrubbed, then sanitised and truncated (error bodies are network text
// and may echo request headers).
func describeError(err error, timeout time.Duration, secrets []string) string {
	return sanitize.Capped(httpclient.Scrub(rawDescription(err, timeout), secrets), maxErrLen)
}

func rawDescription(err error, timeout time.Duration) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("query timed out: no answer within %s", timeout)
	case errors.Is(err, context.Canceled):
		return "query canceled"
	}
	var apiErr *v1.Error
	if !errors.As(err, &apiErr) {
		return err.Error()
	}
	detail := strings.TrimSpace(apiErr.Detail)
	if detail == "" {
		if apiErr.Type == v1.ErrBadData {
			return "bad query (bad_data): " + apiErr.Msg
		}
		return fmt.Sprintf("%s: %s", apiErr.Type, apiErr.Msg)
	}
	// Non-400/422 errors keep the raw body in Detail: a Prometheus JSON
	// error (a query timeout is HTTP 503 with errorType "timeout") or a
	// proxy's page.
	var body struct {
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
	}
	if json.Unmarshal([]byte(detail), &body) == nil && (body.ErrorType != "" || body.Error != "") {
		if body.ErrorType == string(v1.ErrTimeout) {
			return fmt.Sprintf("query timed out on the server (%s): %s", apiErr.Msg, body.Error)
		}
		return fmt.Sprintf("%s (%s): %s", body.ErrorType, apiErr.Msg, body.Error)
	}
	if looksHTML(detail) {
		return fmt.Sprintf("%s: HTML page instead of an API answer (a proxy?): %s", apiErr.Msg, htmlSummary(detail))
	}
	msg := fmt.Sprintf("%s: %s", apiErr.Msg, clip(spaceRE.ReplaceAllString(detail, " ")))
	if strings.Contains(apiErr.Msg, "404") {
		// The path is not a Prometheus API: a wrong prefix, or not a store.
		msg += " (no Prometheus API there: is the URL the store's API root, with its prefix if any, e.g. Mimir's /prometheus?)"
	}
	return msg
}

func looksHTML(s string) bool {
	l := strings.ToLower(s[:min(len(s), 512)])
	return strings.Contains(l, "<html") || strings.Contains(l, "<!doctype") || strings.Contains(l, "<title") || strings.Contains(l, "<body")
}

// htmlSummary returns the page title, else its text.
func htmlSummary(s string) string {
	if m := htmlTitleRE.FindStringSubmatch(s); m != nil && strings.TrimSpace(m[1]) != "" {
		return clip(strings.TrimSpace(spaceRE.ReplaceAllString(m[1], " ")))
	}
	return clip(strings.TrimSpace(spaceRE.ReplaceAllString(htmlTagRE.ReplaceAllString(s, " "), " ")))
}

// clip shortens quoted body text on a rune boundary; sanitising happens
// once, on the whole message.
func clip(s string) string {
	if len(s) <= maxDetailLen {
		return s
	}
	return sanitize.Head(s, maxDetailLen) + "…"
}
