package common

import (
	"math"
	"testing"
	"time"
)

type inner struct {
	at    time.Time
	label string
}

type sample struct {
	N      int
	F      float64
	S      []string
	M      map[string]float64
	P      *inner
	hidden inner
	Fn     func()
}

func sampleValue() sample {
	m := map[string]float64{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		m[k] = float64(len(k))
	}
	return sample{N: 1, F: math.NaN(), S: []string{"x"}, M: m, P: &inner{label: "p"},
		hidden: inner{at: time.Unix(1e9, 0), label: "h"}}
}

func hashOf(v any) Hash {
	h := NewHash()
	h.Value(v)
	return h
}

// Value hashes a whole input: equal inputs (NaN, maps in any order,
// fresh copies) hash alike, and a change anywhere in them, unexported and
// behind pointers included, hashes differently.
func TestValueCoversTheWholeInput(t *testing.T) {
	base := hashOf(sampleValue())
	for range 20 { // map iteration order varies from run to run
		if hashOf(sampleValue()) != base {
			t.Fatal("equal inputs hash differently")
		}
	}
	for name, change := range map[string]func(*sample){
		"int":               func(s *sample) { s.N++ },
		"NaN to a number":   func(s *sample) { s.F = 0 },
		"slice element":     func(s *sample) { s.S[0] = "y" },
		"slice length":      func(s *sample) { s.S = append(s.S, "") },
		"map value":         func(s *sample) { s.M["c"] = 9 },
		"behind a pointer":  func(s *sample) { s.P.label = "q" },
		"nil pointer":       func(s *sample) { s.P = nil },
		"unexported field":  func(s *sample) { s.hidden.label = "i" },
		"unexported time":   func(s *sample) { s.hidden.at = s.hidden.at.Add(time.Nanosecond) },
		"func set or unset": func(s *sample) { s.Fn = func() {} },
	} {
		s := sampleValue()
		change(&s)
		if hashOf(s) == base {
			t.Errorf("%s: the hash did not change", name)
		}
	}
}
