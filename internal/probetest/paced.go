package probetest

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Pace is a chat stream's schedule: the first token TTFT after the request
// arrives, then one token every Gap, each in its own flushed event;
// Reasoning tokens (reasoning_content) come before Answer tokens
// (content). A usage chunk counts them all.
type Pace struct {
	TTFT, Gap         time.Duration
	Reasoning, Answer int
}

// Word is token i's text: 7 cells, so the characters on a screen count
// the tokens that arrived.
func Word(i int) string { return fmt.Sprintf("w%04d, ", i)[:7] }

// Truth is what a paced server did for one request, on the test
// process's clock: when the handler began and when it began writing each
// token event (no client can have read an event earlier).
type Truth struct {
	Received time.Time
	Writes   []time.Time
}

// TTFT is the first write − arrival: a lower bound of the client's TTFT.
func (t Truth) TTFT() time.Duration { return t.Writes[0].Sub(t.Received) }

// E2E is the last write − arrival.
func (t Truth) E2E() time.Duration { return t.Writes[len(t.Writes)-1].Sub(t.Received) }

// TPOT is (last − first write) / (n − 1), the probe's definition on the
// server's instants.
func (t Truth) TPOT() time.Duration {
	return t.Writes[len(t.Writes)-1].Sub(t.Writes[0]) / time.Duration(len(t.Writes)-1)
}

// Paced is a running paced server.
type Paced struct {
	URL    string
	mu     sync.Mutex
	truths []Truth
}

// Truths are the completed requests' instants, in order of completion.
func (p *Paced) Truths() []Truth {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Truth(nil), p.truths...)
}

// StartPaced serves pace on loopback (model "m") until the test ends.
// Deadlines are absolute (arrival + TTFT + k·Gap), so a late wake-up
// does not delay the tokens after it.
func StartPaced(t testing.TB, pace Pace) *Paced {
	t.Helper()
	p := &Paced{}
	p.URL = Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr := Truth{Received: time.Now()}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		flush(w)
		n := pace.Reasoning + pace.Answer
		for i := range n {
			deadline := tr.Received.Add(pace.TTFT + time.Duration(i)*pace.Gap)
			timer := time.NewTimer(time.Until(deadline))
			select {
			case <-timer.C:
			case <-r.Context().Done():
				timer.Stop()
				return
			}
			chunk := ChatChunk(Word(i))
			if i < pace.Reasoning {
				chunk = ReasoningChunk(Word(i))
			}
			tr.Writes = append(tr.Writes, time.Now())
			if _, err := w.Write([]byte(SSEData(chunk))); err != nil {
				return
			}
			flush(w)
		}
		if _, err := w.Write([]byte(SSEData(FinishChunk, UsageChunk(n), "[DONE]"))); err != nil {
			return
		}
		flush(w)
		p.mu.Lock()
		p.truths = append(p.truths, tr)
		p.mu.Unlock()
	})).URL
	return p
}
