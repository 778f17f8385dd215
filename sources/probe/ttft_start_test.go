package probe

import (
	"net"
	"net/http/httptest"
	"testing"
	"time"
)

// slowHandshakeListener delays the first read of every accepted connection:
// the server sits on the ClientHello, so the TLS handshake (and only it)
// takes at least delay.
type slowHandshakeListener struct {
	net.Listener
	delay time.Duration
}

func (l slowHandshakeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &slowFirstRead{Conn: c, delay: l.delay}, nil
}

type slowFirstRead struct {
	net.Conn
	delay time.Duration
	done  bool
}

func (c *slowFirstRead) Read(b []byte) (int, error) {
	if !c.done {
		c.done = true
		time.Sleep(c.delay) // the slow handshake under test, not synchronisation
	}
	return c.Conn.Read(b)
}

// TTFT starts when the connection is ready (httptrace GotConn): connection
// setup is reported apart (Connect, TLS) and never counted as time to the
// first token. A server slow only in its TLS handshake must show a long TLS
// span and a short TTFT.
func TestTTFTExcludesTLSHandshake(t *testing.T) {
	const handshake = 600 * time.Millisecond
	srv := httptest.NewUnstartedServer(scripted("text/event-stream", []step{{Data: sseData(chatChunk("a"), chatChunk("b"), finishChunk, "[DONE]")}}))
	srv.Listener = slowHandshakeListener{Listener: srv.Listener, delay: handshake}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	r := probeOnce(t, Options{URL: srv.URL, Auth: Auth{Insecure: true}})
	if !r.OK {
		t.Fatalf("probe failed: %s %s", r.ErrorKind, r.Err)
	}
	if r.Reused || r.TLS < handshake {
		t.Fatalf("reused %v, TLS %v: want a fresh connection whose handshake took at least %v", r.Reused, r.TLS, handshake)
	}
	if r.TTFT <= 0 || r.TTFT >= handshake {
		t.Errorf("TTFT %v with a %v handshake (TLS span %v): the handshake was counted inside TTFT", r.TTFT, handshake, r.TLS)
	}
	if r.TTFB >= handshake {
		t.Errorf("TTFB %v includes the %v handshake", r.TTFB, handshake)
	}
}
