package probe

import (
	"bytes"
	"slices"
	"unicode/utf8"
)

// decodeCommonChunk decodes the usual chat/completions token chunk into c
// without encoding/json, which costs ~4 µs per event hot and several
// times that in a mostly idle process, where every event arrives on a
// cold cache. It reports false as soon as the input strays from that
// shape (escapes, unknown or case-folded keys, nested values in ignored
// fields, usage, errors, no choices, duplicate choices); the caller then
// decodes the event with encoding/json, so every input it accepts decodes
// to exactly what encoding/json would produce (FuzzCommonChunk checks).
// c must be reset; the model is returned rather than stored so a refused
// event leaves the parser's state as it was.
func decodeCommonChunk(data []byte, c *openAIChunk) (model []byte, hasModel, ok bool) {
	s := chunkScanner{b: data}
	seenChoices := false
	ok = s.object(func(key []byte) bool {
		switch string(key) {
		case "model":
			v, ok := s.str()
			if ok && !hasModel {
				model, hasModel = v, true
			}
			return ok
		case "choices":
			if seenChoices {
				return false
			}
			seenChoices = true
			return s.choices(c)
		case "usage":
			return s.null() // a usage object takes the slow path
		case "id", "object", "created", "system_fingerprint", "service_tier", "obfuscation":
			return s.scalar()
		}
		return false
	})
	s.ws()
	return model, hasModel, ok && seenChoices && len(c.Choices) > 0 && s.i == len(s.b)
}

// chunkScanner reads the subset of JSON that decodeCommonChunk accepts.
type chunkScanner struct {
	b []byte
	i int
}

func (s *chunkScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next consumes c (after white space) if it comes next.
func (s *chunkScanner) next(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// object reads {"key": value, ...}; member reads each value.
func (s *chunkScanner) object(member func(key []byte) bool) bool {
	if !s.next('{') {
		return false
	}
	if s.next('}') {
		return true
	}
	for {
		k, ok := s.str()
		if !ok || !s.next(':') || !member(k) {
			return false
		}
		if !s.next(',') {
			return s.next('}')
		}
	}
}

// str reads a string without escapes or control bytes, as it appears in
// the input (valid UTF-8 only: encoding/json would replace bad bytes).
func (s *chunkScanner) str() ([]byte, bool) {
	if !s.next('"') {
		return nil, false
	}
	ascii := true
	for j := s.i; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			v := s.b[s.i:j]
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			s.i = j + 1
			return v, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, false
}

// null consumes the literal null if it comes next.
func (s *chunkScanner) null() bool {
	s.ws()
	if bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += len("null")
		return true
	}
	return false
}

// optStr reads a string or null (nil, true: encoding/json leaves the
// field as it was).
func (s *chunkScanner) optStr() ([]byte, bool) {
	if s.null() {
		return nil, true
	}
	return s.str()
}

// integer reads -?(0|[1-9][0-9]*); anything fancier is refused.
func (s *chunkScanner) integer() bool {
	s.ws()
	s.next('-')
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	n := s.i - start
	return n == 1 || (n > 1 && s.b[start] != '0')
}

// scalar reads an ignored value: a string, an integer or null.
func (s *chunkScanner) scalar() bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == 'n':
		return s.null()
	}
	return s.integer()
}

func (s *chunkScanner) choices(c *openAIChunk) bool {
	if !s.next('[') {
		return false
	}
	if s.next(']') {
		return true
	}
	for {
		n := len(c.Choices)
		c.Choices = slices.Grow(c.Choices, 1)[:n+1]
		clear(c.Choices[n:])
		if !s.choice(c, n) {
			return false
		}
		if !s.next(',') {
			return s.next(']')
		}
	}
}

// choice reads choices[n]: delta, text and finish_reason; index,
// logprobs (null) and stop_reason are ignored as encoding/json ignores
// them.
func (s *chunkScanner) choice(c *openAIChunk, n int) bool {
	ch := &c.Choices[n]
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "delta":
			return s.object(func(key []byte) bool {
				switch string(key) {
				case "content":
					return s.setStr(&ch.Delta.Content)
				case "reasoning_content":
					return s.setStr(&ch.Delta.ReasoningContent)
				case "reasoning":
					return s.setStr(&ch.Delta.Reasoning)
				case "role", "refusal":
					_, ok := s.optStr()
					return ok
				}
				return false
			})
		case "text":
			return s.setStr(&ch.Text)
		case "finish_reason":
			v, ok := s.optStr()
			if !ok {
				return false
			}
			if v == nil {
				ch.FinishReason = nil
			} else {
				r := string(v)
				ch.FinishReason = &r
			}
			return true
		case "index":
			return s.integer()
		case "logprobs":
			return s.null()
		case "stop_reason":
			return s.scalar()
		}
		return false
	})
}

// setStr reads a string or null into *dst (null leaves it).
func (s *chunkScanner) setStr(dst *string) bool {
	v, ok := s.optStr()
	if ok && v != nil {
		*dst = string(v)
	}
	return ok
}
