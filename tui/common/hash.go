package common

import (
	"math"
	"time"
)

// Hash is FNV-1a over the inputs of a rendered section: panes cache what
// they drew under it and draw again only when it changes. Raw floats are
// hashed, so a change the display rounds away costs one render, and a
// real change is never missed. The zero value is not ready: use NewHash.
type Hash uint64

// NewHash returns an empty hash.
func NewHash() Hash { return 14695981039346656037 }

func (h *Hash) byte(c byte) { *h = (*h ^ Hash(c)) * 1099511628211 }

// U64 adds v.
func (h *Hash) U64(v uint64) {
	for i := 0; i < 8; i++ {
		h.byte(byte(v >> (8 * i)))
	}
}

// Int adds v.
func (h *Hash) Int(v int) { h.U64(uint64(v)) }

// F64 adds v (bit-exact: NaN and -0 are their own values).
func (h *Hash) F64(v float64) { h.U64(math.Float64bits(v)) }

// Floats adds the length and every value of vs.
func (h *Hash) Floats(vs []float64) {
	h.Int(len(vs))
	for _, v := range vs {
		h.F64(v)
	}
}

// Bool adds v.
func (h *Hash) Bool(v bool) {
	if v {
		h.byte(1)
	} else {
		h.byte(0)
	}
}

// Str adds s and a terminator, so ("ab","c") and ("a","bc") differ.
func (h *Hash) Str(s string) {
	for i := 0; i < len(s); i++ {
		h.byte(s[i])
	}
	h.Int(len(s))
}

// Time adds t to the nanosecond (the zero time included).
func (h *Hash) Time(t time.Time) {
	h.Int(int(t.Unix()))
	h.Int(t.Nanosecond())
}

// Memo is one cached rendering and the hash of the inputs it was drawn
// from.
type Memo struct {
	key     Hash
	text    string
	set     bool
	renders int
}

// Get returns the cached text when key matches, else renders, caches and
// returns it.
func (m *Memo) Get(key Hash, render func() string) string {
	if !m.set || m.key != key {
		m.key, m.text, m.set = key, render(), true
		m.renders++
	}
	return m.text
}

// Renders is how many times Get rendered (tests, benchmarks).
func (m *Memo) Renders() int { return m.renders }
