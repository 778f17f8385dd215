package problems

import "testing"

func TestHintMatchesTheFailure(t *testing.T) {
	for _, tc := range []struct{ msg, url, want string }{
		{`connect: dial tcp 127.0.0.1:18001: connect: connection refused`, "http://127.0.0.1:18001", "nothing listens there: is the server running on 127.0.0.1:18001, on that port?"},
		{"HTTP 405 Method Not Allowed (attempt 2 of 4)", "", "the URL does not take this method: an Alertmanager webhook is POSTed to /api/v2/alerts"},
		{"http_status: HTTP 503: temporarily unavailable", "", "the server says it is unavailable: overloaded, starting, or in an outage"},
		{"tls: x509: certificate signed by unknown authority", "", "TLS verification failed: give the server's CA with --ca-file (--insecure skips verification, and says so)"},
		{"stall: no response headers within the stall timeout", "", "the server took the request but sent no response headers: it is hung, stopped, or queueing without answering"},
		{"stall: no event within the stall timeout", "", "the stream stopped mid-answer: the engine may be stuck or preempting"},
		{"something odd", "", ""},
	} {
		if got := Hint(tc.msg, tc.url); got != tc.want {
			t.Errorf("Hint(%q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
}
