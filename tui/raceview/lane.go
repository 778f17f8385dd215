package raceview

import (
	"strconv"
	"time"

	"github.com/ttftop/ttftop/figures"
)

// point is the token count at a chunk's arrival.
type point struct {
	at     time.Duration
	tokens int
}

// lane is one racer's state in the current round.
type lane struct {
	Lane
	box     textBox
	points  []point
	ttft    time.Duration
	started bool // a first token arrived
	done    *Finished
	pos     int
	fig     []string // the figures as last computed
}

func (l *lane) reset(width int) {
	l.box.reset(width)
	l.points, l.ttft, l.started, l.done, l.pos = nil, 0, false, nil, 0
}

func (l *lane) add(c Chunk) {
	l.box.addChunk(c.Part, c.Text)
	l.points = append(l.points, point{c.At, c.Tokens})
	l.ttft, l.started = c.TTFT, true
}

// rateWindow is the span "tok/s now" counts tokens over.
const rateWindow = time.Second

// rateNow is the tokens that arrived in the last rateWindow (or since the
// first token, when that is shorter: the first event's own tokens are not
// in the span, as in decode tok/s) per second, at elapsed time now.
func (l *lane) rateNow(now time.Duration) (float64, bool) {
	if !l.started || now <= l.ttft {
		return 0, false
	}
	from := max(now-rateWindow, l.ttft)
	base := 0
	for i := len(l.points) - 1; i >= 0; i-- {
		if l.points[i].at <= from {
			base = l.points[i].tokens
			break
		}
	}
	last := l.points[len(l.points)-1].tokens
	return float64(last-base) / (now - from).Seconds(), true
}

// tpotSoFar is the probe's TPOT over the stream so far: (last event −
// TTFT) / (tokens − 1).
func (l *lane) tpotSoFar() (time.Duration, bool) {
	if len(l.points) < 2 {
		return 0, false
	}
	last := l.points[len(l.points)-1]
	if last.tokens < 2 || last.at <= l.ttft {
		return 0, false
	}
	return (last.at - l.ttft) / time.Duration(last.tokens-1), true
}

func ms(d time.Duration) string { return figures.Millis(float64(d) / float64(time.Millisecond)) }

// tokensText is a count, "~" marking one counted from events.
func tokensText(n int, approx bool) string {
	if approx {
		return "~" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// ordinal is 1st, 2nd, 3rd, 4th…
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}
