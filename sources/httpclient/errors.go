package httpclient

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/ttftop/ttftop/sanitize"
)

// ErrBodyTooLarge is wrapped by the error of a response over the body cap.
var ErrBodyTooLarge = errors.New("response body exceeds the size cap")

// Error is a failed request. Its message is sanitised, names the URL only
// in redacted form and never contains a secret or a request header.
type Error struct {
	// URL is the redacted request URL.
	URL string
	// Status is the HTTP status, 0 when no response arrived.
	Status int
	// Msg is the sanitised description.
	Msg string
	// Err is the cause, for errors.Is (context.DeadlineExceeded,
	// ErrBodyTooLarge); its own text may be unsanitised.
	Err error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Redact returns u with any password replaced (url.URL.Redacted) and its
// query dropped (tokens are often passed there).
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<invalid url>"
	}
	u.RawQuery = ""
	u.Fragment = ""
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	return sanitize.Text(u.Redacted())
}

// newError builds an Error; cause's text is stripped of the URL that
// net/http embeds (it may carry credentials) and sanitised.
func newError(rawURL string, status int, cause error, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if cause != nil {
		var uerr *url.Error
		text := cause.Error()
		if errors.As(cause, &uerr) {
			text = uerr.Err.Error()
		}
		msg += ": " + text
	}
	return &Error{URL: Redact(rawURL), Status: status, Msg: sanitize.Text(msg), Err: cause}
}
