package record

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// sameLine compares decoded lines, NaN equal to NaN.
func sameLine(a, b line) bool {
	nan := func(l *line) {
		if math.IsNaN(float64(l.Value)) {
			l.Value = 0
		}
		l.Alert = bytes.TrimSpace(l.Alert)
	}
	nan(&a)
	nan(&b)
	return reflect.DeepEqual(a, b)
}

func seedLines(t testing.TB) [][]byte {
	var out [][]byte
	for _, o := range mixed(40, 1500*time.Millisecond) {
		o.At = o.At.UTC()
		b, err := encodeObservation(nil, o, false)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.TrimSuffix(b, []byte{'\n'}))
	}
	for _, l := range []line{headerLine(t0), checkpointLine(t0, 3, 12, 9), {Observation: telemetry.Observation{Kind: KindAlert, At: t0}, Alert: json.RawMessage(`{"a":[1,"x\"}"]}`)}} {
		b, err := appendJSON(nil, &l)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.TrimSuffix(b, []byte{'\n'}))
	}
	return append(out,
		[]byte(`{"state":true,"kind":"sample","at":"2026-03-14T12:00:01.5Z","value":"-Inf"}`),
		[]byte(`{"kind":"sample","at":"2026-03-14T13:00:00+01:00","value":1e-3}`),
		[]byte(`{"kind":"sample","value":01}`),
		[]byte(`{"KIND":"sample"}`),
		[]byte(`{"kind":"sample","probe":null}`),
		[]byte(`{"kind":"sample","at":"2026-02-31T00:00:00Z"}`),
		[]byte(` { "kind" : "x" , "interval" : 5 } `),
		[]byte(`{"kind":"sample"} trailing`),
	)
}

// TestFastDecodeMatchesJSON: whatever the fast path accepts, encoding/json
// accepts and decodes the same way.
func TestFastDecodeMatchesJSON(t *testing.T) {
	fast := 0
	for _, b := range seedLines(t) {
		if checkDecode(t, b) {
			fast++
		}
	}
	if fast < 40 {
		t.Errorf("only %d lines took the fast path", fast)
	}
}

func checkDecode(t *testing.T, b []byte) bool {
	var f, s line
	var in interner
	ferr := fastDecode(b, &f, &in)
	serr := json.Unmarshal(b, &s)
	if ferr != nil {
		return false
	}
	if serr != nil {
		t.Fatalf("fast path accepted %q, encoding/json: %v", b, serr)
	}
	if !sameLine(f, s) {
		t.Fatalf("%q:\nfast %+v\njson %+v", b, f, s)
	}
	return true
}

func FuzzFastDecode(f *testing.F) {
	for _, b := range seedLines(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDecode(t, b) })
}

func TestJSONFloat(t *testing.T) {
	for _, v := range []float64{0, -0.5, 1e-300, 123456789.125, math.Inf(1), math.Inf(-1), math.NaN()} {
		b, err := jsonFloat(v).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var got jsonFloat
		if err := got.UnmarshalJSON(b); err != nil {
			t.Fatal(err)
		}
		if float64(got) != v && !(math.IsNaN(v) && math.IsNaN(float64(got))) {
			t.Errorf("%g → %s → %g", v, b, got)
		}
	}
}

func BenchmarkDecodeSampleLine(b *testing.B) {
	o := telemetry.Observation{Kind: telemetry.KindSample, At: t0.Add(123456789), Endpoint: "10.0.0.7:8000/meta-llama/Llama-3.1-8B-Instruct",
		Signal: telemetry.ITL, Source: "probe:http://10.0.0.7:8000/v1/chat/completions", Value: 0.0123456, Interval: 10 * time.Second}
	buf, err := encodeObservation(nil, o, false)
	if err != nil {
		b.Fatal(err)
	}
	buf = bytes.TrimSuffix(buf, []byte{'\n'})
	var in interner
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		var l line
		if err := decodeLine(buf, &l, &in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSmallDecimal: the fast float path gives ParseFloat's bits.
func TestSmallDecimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []string{"0", "-0", "1", "0.005", "2560", "7680.0", "123456789012345", "0.000000000000000000001", "-12.5"}
	for range 20000 {
		v := rng.Float64() * math.Pow(10, float64(rng.IntN(12)-6))
		cases = append(cases, strconv.FormatFloat(v, 'f', rng.IntN(10), 64), strconv.FormatFloat(v, 'g', -1, 64))
	}
	for _, c := range cases {
		s := &scanner{b: []byte(c)}
		got, ok := s.smallDecimal()
		if !ok {
			continue
		}
		want, err := strconv.ParseFloat(c, 64)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) || s.i != len(c) {
			t.Fatalf("%s: fast %v (read %d), ParseFloat %v %v", c, got, s.i, want, err)
		}
	}
}
