package sshserve

import (
	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// Limits on what a client may push into a session before its shell starts.
const (
	maxEnvRequests = 64
	maxEnvBytes    = 4096
)

// sessionChannel is the only channel type served. It hands the library's
// session handler a filtered request stream: the library acknowledges
// agent forwarding by default, which a read-only viewer must not, and
// keeps every "env" request without bound.
func (s *Server) sessionChannel(srv *ssh.Server, conn *gossh.ServerConn, nc gossh.NewChannel, ctx ssh.Context) {
	ssh.DefaultSessionHandler(srv, conn, filteredChannel{NewChannel: nc, s: s}, ctx)
}

type filteredChannel struct {
	gossh.NewChannel
	s *Server
}

func (c filteredChannel) Accept() (gossh.Channel, <-chan *gossh.Request, error) {
	ch, reqs, err := c.NewChannel.Accept()
	if err != nil {
		return nil, nil, err
	}
	out := make(chan *gossh.Request)
	go c.s.filterRequests(reqs, out)
	return ch, out, nil
}

// filterRequests forwards the requests the session handler may see and
// refuses the rest; it ends when the channel's requests end.
func (s *Server) filterRequests(in <-chan *gossh.Request, out chan<- *gossh.Request) {
	defer close(out)
	envs := 0
	for req := range in {
		switch req.Type {
		case "auth-agent-req@openssh.com", "x11-req":
			s.deny(req)
			continue
		case "env":
			envs++
			if envs > maxEnvRequests || len(req.Payload) > maxEnvBytes {
				s.deny(req)
				continue
			}
		}
		out <- req
	}
}

func (s *Server) deny(req *gossh.Request) {
	if err := req.Reply(false, nil); err != nil {
		s.log.Debug("ssh request reply", "type", req.Type, "err", err)
	}
}
