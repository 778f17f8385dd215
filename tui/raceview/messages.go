// Package raceview draws a race: one lane per racer, its streamed text
// appearing as each chunk arrives (never smoothed or replayed faster), its
// live figures, and the result. It knows nothing of the probe: the
// command feeds it these messages.
package raceview

import "time"

// Part is what a chunk of text is.
type Part uint8

const (
	Answer    Part = iota // the answer: drawn in the normal colour
	Reasoning             // reasoning or thinking: dimmed
	Tool                  // tool-call arguments: marked
)

// Lane names one racer.
type Lane struct {
	Label string // A, B, …
	Name  string // what is raced: host/model
}

// Started says a round's requests were released (all at once).
type Started struct {
	Round int
}

// Chunk is one token-bearing event of a racer, sent as it was read.
type Chunk struct {
	Racer  int
	Text   string // sanitised by the sender
	Part   Part
	At     time.Duration // since the racer's request start
	TTFT   time.Duration // the racer's first token, since its start
	Tokens int           // output tokens so far
}

// Finished is a racer's outcome, with the probe's figures.
type Finished struct {
	Racer   int
	OK      bool
	Err     string // sanitised, when not OK
	TTFT    time.Duration
	TPOT    time.Duration
	HasTPOT bool // TPOT is undefined for one token
	E2E     time.Duration
	Tokens  int
	Approx  bool // Tokens counted from events, not reported by the server
}

// Ended closes a round: the measured spread of the request starts and
// each racer's finish position (0: failed).
type Ended struct {
	Round     int
	StartSkew time.Duration
	Positions []int
}

// Summary is the text that sums up several rounds (medians, intervals),
// shown below the lanes.
type Summary struct{ Text string }
