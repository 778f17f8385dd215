package slo

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// stepKind is what a scripted source does at one evaluation step.
type stepKind int

const (
	stepValue   stepKind = iota // a measurement
	stepMissing                 // nothing arrives: `_` (and `stale`: staleness comes from time)
	stepNoData                  // the source answers with nothing: `nodata`
	stepError                   // the source fails: `error`
)

type step struct {
	kind stepKind
	v    float64
}

// parseSeries reads promtool-style input series ('1+0x6 stale _x3'):
// numbers; 'a+bxN' and 'a-bxN' (N+1 values a, a±b, …); 'axN' (a, N+1
// times); '_' missing and '_xN' (N missing); 'stale'; plus ttftop's
// 'nodata' and 'error' (each also 'xN', N times).
func parseSeries(s string) ([]step, error) {
	var out []step
	for _, tok := range strings.Fields(s) {
		base, times, hasX := strings.Cut(tok, "x")
		n := 1
		if hasX {
			k, err := strconv.Atoi(times)
			if err != nil || k < 0 {
				return nil, fmt.Errorf("bad repeat in %q", tok)
			}
			n = k
		}
		switch base {
		case "_", "stale", "nodata", "error":
			kind := map[string]stepKind{"_": stepMissing, "stale": stepMissing, "nodata": stepNoData, "error": stepError}[base]
			for range n {
				out = append(out, step{kind: kind})
			}
			continue
		}
		start, inc := base, "0"
		sign := 1.0
		if i := strings.LastIndexAny(base, "+-"); i > 0 && base[i-1] != 'e' && base[i-1] != 'E' {
			start, inc = base[:i], base[i+1:]
			if base[i] == '-' {
				sign = -1
			}
		}
		a, err := strconv.ParseFloat(start, 64)
		if err != nil {
			return nil, fmt.Errorf("bad value in %q", tok)
		}
		b, err := strconv.ParseFloat(inc, 64)
		if err != nil {
			return nil, fmt.Errorf("bad increment in %q", tok)
		}
		if !hasX {
			if inc != "0" {
				return nil, fmt.Errorf("%q: an increment needs xN", tok)
			}
			out = append(out, step{kind: stepValue, v: a})
			continue
		}
		for i := 0; i <= n; i++ {
			out = append(out, step{kind: stepValue, v: a + sign*b*float64(i)})
		}
	}
	return out, nil
}

func mustSeries(t *testing.T, s string) []step {
	t.Helper()
	st, err := parseSeries(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestParseSeries(t *testing.T) {
	show := func(st []step) string {
		var b []string
		for _, s := range st {
			switch s.kind {
			case stepValue:
				b = append(b, strconv.FormatFloat(s.v, 'g', -1, 64))
			case stepMissing:
				b = append(b, "_")
			case stepNoData:
				b = append(b, "N")
			case stepError:
				b = append(b, "E")
			}
		}
		return strings.Join(b, " ")
	}
	for in, want := range map[string]string{
		"1+0x6 stale _x3":    "1 1 1 1 1 1 1 _ _ _ _",
		"1+2x3":              "1 3 5 7",
		"10-1x2 _ 4":         "10 9 8 _ 4",
		"7x2 errorx2 nodata": "7 7 7 E E N",
		"-1 1e-3 -2+1x1":     "-1 0.001 -2 -1",
	} {
		st, err := parseSeries(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := show(st); got != want {
			t.Errorf("%q = %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"1+x", "a", "1x-2", "1+1"} {
		if _, err := parseSeries(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
