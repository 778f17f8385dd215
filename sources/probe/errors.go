package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"syscall"

	"github.com/ttftop/ttftop/sanitize"
)

// ErrorKind is the category of a failed probe, stable for JSON and alerts.
type ErrorKind string

const (
	ErrHTTPStatus   ErrorKind = "http_status"   // non-2xx answer
	ErrRateLimited  ErrorKind = "rate_limited"  // 429; Retry-After is honoured by the scheduler
	ErrStream       ErrorKind = "stream_error"  // error event inside an HTTP 200 stream
	ErrTruncated    ErrorKind = "truncated"     // stream ended before its terminal event
	ErrInvalidEvent ErrorKind = "invalid_event" // undecodable event, or not a stream at all
	ErrNoOutput     ErrorKind = "no_output"     // complete stream without any token-bearing event
	ErrStall        ErrorKind = "stall"         // no event for the stall timeout
	ErrTimeout      ErrorKind = "timeout"       // the per-request timeout
	ErrConnect      ErrorKind = "connect"       // refused, unreachable, reset before an answer
	ErrDNS          ErrorKind = "dns"
	ErrTLS          ErrorKind = "tls"
	ErrLineTooLong  ErrorKind = "line_too_long" // one line over the line cap
	ErrCanceled     ErrorKind = "canceled"      // shutdown; not the endpoint's fault
	ErrConfig       ErrorKind = "config"        // our side: key file unreadable, bad request
)

// causeError is a cancellation cause, so a cancelled context says why.
// A constant string type keeps the sentinels immutable.
type causeError string

func (e causeError) Error() string { return string(e) }

const (
	errStall   causeError = "stall"
	errTimeout causeError = "request timeout"
)

// probeError carries a kind through the measurement core.
type probeError struct {
	kind ErrorKind
	msg  string
}

func (e *probeError) Error() string { return string(e.kind) + ": " + e.msg }

func failf(kind ErrorKind, msg string) *probeError { return &probeError{kind: kind, msg: msg} }

// classify maps a transport or read error to a kind. ctx is the request
// context: its cause distinguishes our stall and timeout cancellations
// from a shutdown. The message is sanitised: Go errors can quote bytes the
// server sent (a malformed status line) and the URL.
func classify(ctx context.Context, err error, afterHeaders bool) *probeError {
	var pe *probeError
	if errors.As(err, &pe) {
		return pe
	}
	msg := sanitize.Text(err.Error())
	if ctx.Err() != nil {
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, errStall) && !afterHeaders:
			// Not a stream that stopped: the answer never began (the
			// server stopped, hung, or its headers trickle).
			return failf(ErrStall, "no response headers within the stall timeout")
		case errors.Is(cause, errStall):
			return failf(ErrStall, "no event within the stall timeout")
		case errors.Is(cause, errTimeout):
			return failf(ErrTimeout, "request timeout reached")
		default:
			return failf(ErrCanceled, "canceled")
		}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return failf(ErrDNS, msg)
	}
	if isTLSError(err) {
		return failf(ErrTLS, msg)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return failf(ErrConnect, msg)
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return failf(ErrConnect, msg)
	}
	if afterHeaders {
		return failf(ErrTruncated, "stream broken: "+msg)
	}
	return failf(ErrConnect, msg)
}

func isTLSError(err error) bool {
	var (
		unknownCA   x509.UnknownAuthorityError
		invalid     x509.CertificateInvalidError
		hostname    x509.HostnameError
		verifyErr   *tls.CertificateVerificationError
		recordErr   tls.RecordHeaderError
		alertErr    tls.AlertError
		echRejected *tls.ECHRejectionError
	)
	switch {
	case errors.As(err, &unknownCA), errors.As(err, &invalid), errors.As(err, &hostname),
		errors.As(err, &verifyErr), errors.As(err, &recordErr), errors.As(err, &alertErr), errors.As(err, &echRejected):
		return true
	}
	return strings.Contains(err.Error(), "tls: ")
}
