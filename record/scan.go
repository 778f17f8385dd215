package record

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// errSlow sends a line to encoding/json: the fast path saw something it
// does not handle (escapes, unknown members, nulls, bad syntax).
var errSlow = errors.New("not on the fast path")

// scanner walks one JSON value by hand, for the fast path.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) expect(c byte) error {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != c {
		return errSlow
	}
	s.i++
	return nil
}

// null consumes a null literal if one is next.
func (s *scanner) null() bool {
	s.ws()
	if hasPrefixAt(s.b, s.i, "null") {
		s.i += 4
		return true
	}
	return false
}

func hasPrefixAt(b []byte, i int, p string) bool {
	return len(b)-i >= len(p) && string(b[i:i+len(p)]) == p
}

// str returns the bytes of a string without escapes, control or non-ASCII
// bytes (which need encoding/json's unescaping and UTF-8 repair).
func (s *scanner) str() ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	start := s.i
	// Eight bytes at a time while none is special: strings are most of
	// a line, and this loop most of decoding.
	for s.i+8 <= len(s.b) && !special8(binary.LittleEndian.Uint64(s.b[s.i:])) {
		s.i += 8
	}
	for ; s.i < len(s.b); s.i++ {
		c := s.b[s.i]
		if c == '"' {
			s.i++
			return s.b[start : s.i-1], nil
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return nil, errSlow
		}
	}
	return nil, errSlow
}

// special8 reports whether any of the 8 bytes in x is a quote, a
// backslash, a control byte or non-ASCII (bit tricks from "Bit Twiddling
// Hacks": a byte is zero iff (v-1) & ^v has its high bit).
func special8(x uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - lo) & ^v & hi }
	return (zero(x^(lo*'"')) | zero(x^(lo*'\\')) | ((x - lo*0x20) & ^x & hi) | (x & hi)) != 0
}

// number returns the bytes of a JSON number.
func (s *scanner) number() ([]byte, error) {
	s.ws()
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		s.i++
	}
	if !jsonNumber(s.b[start:s.i]) {
		return nil, errSlow
	}
	return s.b[start:s.i], nil
}

// jsonNumber checks JSON's number grammar, stricter than strconv's (no
// leading zeros, no '+', digits on both sides of '.').
func jsonNumber(b []byte) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// float reads a number, or a float in a string (jsonLE, NaN, ±Inf).
func (s *scanner) float() (float64, error) {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '"' {
		v, err := s.str()
		if err != nil {
			return 0, err
		}
		if f, n, ok := smallDecimal(v); ok && n == len(v) {
			return f, nil // bucket bounds: "0.5"
		}
		return parseFloatString(string(v))
	}
	if f, ok := s.smallDecimal(); ok {
		return f, nil
	}
	n, err := s.number()
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(string(n), 64)
}

// smallDecimal reads a number of at most 15 significant digits and no
// exponent (bucket bounds, counts, most values) in one pass without
// strconv: the mantissa and the power of ten are exact doubles, so one
// division rounds correctly, the same result as ParseFloat. Anything else
// is left unread for the general path.
func (s *scanner) smallDecimal() (float64, bool) {
	s.ws()
	f, n, ok := smallDecimal(s.b[s.i:])
	if ok {
		s.i += n
	}
	return f, ok
}

// smallDecimal converts the decimal at the start of b, returning how many
// bytes it took.
func smallDecimal(b []byte) (float64, int, bool) {
	i := 0
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	var m uint64
	digits, frac := 0, 0
	intStart := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		m = m*10 + uint64(b[i]-'0')
		if m > 0 {
			digits++
		}
		i++
	}
	if i == intStart || (b[intStart] == '0' && i-intStart > 1) {
		return 0, 0, false // no digits, or a leading zero: not JSON
	}
	if i < len(b) && b[i] == '.' {
		i++
		fracStart := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			m = m*10 + uint64(b[i]-'0')
			if m > 0 {
				digits++
			}
			i++
		}
		frac = i - fracStart
		if frac == 0 {
			return 0, 0, false
		}
	}
	if digits > 15 || frac > 22 || (i < len(b) && (b[i] == 'e' || b[i] == 'E')) {
		return 0, 0, false
	}
	f, p := float64(m), 1.0
	for ; frac > 0; frac-- {
		p *= 10
	}
	f /= p
	if neg {
		f = -f
	}
	return f, i, true
}

func (s *scanner) int() (int64, error) {
	n, err := s.number()
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(n), 10, 64)
}

func (s *scanner) bool() (bool, error) {
	s.ws()
	switch {
	case hasPrefixAt(s.b, s.i, "true"):
		s.i += 4
		return true, nil
	case hasPrefixAt(s.b, s.i, "false"):
		s.i += 5
		return false, nil
	}
	return false, errSlow
}

// object calls member for each member of an object; member consumes the
// value.
func (s *scanner) object(member func(key []byte) error) error {
	return s.list('{', '}', func() error {
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		return member(key)
	})
}

// array calls elem for each element of an array; elem consumes it.
func (s *scanner) array(elem func() error) error { return s.list('[', ']', elem) }

// list scans open, items separated by commas (each consumed by item),
// then closing.
func (s *scanner) list(open, closing byte, item func() error) error {
	if err := s.expect(open); err != nil {
		return err
	}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == closing {
		s.i++
		return nil
	}
	for {
		if err := item(); err != nil {
			return err
		}
		s.ws()
		if s.i >= len(s.b) {
			return errSlow
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case closing:
			s.i++
			return nil
		default:
			return errSlow
		}
	}
}

// value skips any JSON value and returns its bytes, for encoding/json to
// decode and validate: it stops at the comma or closing bracket that ends
// the member.
func (s *scanner) value() ([]byte, error) {
	s.ws()
	start, depth := s.i, 0
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			for s.i++; s.i < len(s.b) && s.b[s.i] != '"'; s.i++ {
				if s.b[s.i] == '\\' {
					s.i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return s.b[start:s.i], nil
			}
			depth--
		case ',':
			if depth == 0 {
				return s.b[start:s.i], nil
			}
		}
		s.i++
	}
	return nil, errSlow
}

func (s *scanner) end() error {
	s.ws()
	if s.i != len(s.b) {
		return errSlow
	}
	return nil
}
