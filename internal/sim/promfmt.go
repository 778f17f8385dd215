package sim

import (
	"math"
	"strconv"
	"strings"
)

// pyFloat formats like Python prometheus_client's floatToGoString, which
// is what vLLM and SGLang emit: repr() ("0.0", "246.0", "1e-05") with
// exponent notation once there are more than 6 integer digits
// ("1.7710424574207425e+09", "8.128902e+06").
func pyFloat(d float64) string {
	switch {
	case math.IsInf(d, 1):
		return "+Inf"
	case math.IsInf(d, -1):
		return "-Inf"
	case math.IsNaN(d):
		return "NaN"
	}
	var s string
	if a := math.Abs(d); d != 0 && (a < 1e-4 || a >= 1e16) {
		s = strconv.FormatFloat(d, 'e', -1, 64) // Python: 1e-05, 1.5e+16
	} else {
		s = strconv.FormatFloat(d, 'f', -1, 64)
		if !strings.ContainsRune(s, '.') {
			s += ".0"
		}
	}
	dot := strings.IndexByte(s, '.')
	if d > 0 && dot > 6 {
		mantissa := strings.TrimRight(s[:1]+"."+s[1:dot]+s[dot+1:], "0.")
		return mantissa + "e+0" + strconv.Itoa(dot-1)
	}
	return s
}

// writeCount writes pyFloat(float64(n)) without allocating for the
// counts a histogram bucket usually holds (under 10^6, where Python
// prints "123456.0"; larger ones switch to exponent notation).
func writeCount(b *strings.Builder, n uint64) {
	if n >= 1e6 {
		b.WriteString(pyFloat(float64(n)))
		return
	}
	var digits [24]byte
	b.Write(strconv.AppendUint(digits[:0], n, 10))
	b.WriteString(".0")
}

// escapeLabel escapes a label value for the text exposition format.
func escapeLabel(v string) string {
	if !strings.ContainsAny(v, "\\\"\n") {
		return v
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

// family writes the HELP and TYPE lines of a metric family.
func family(b *strings.Builder, name, typ, help string) {
	b.WriteString("# HELP ")
	b.WriteString(name)
	if help != "" {
		b.WriteByte(' ')
		b.WriteString(help)
	}
	b.WriteString("\n# TYPE ")
	b.WriteString(name)
	b.WriteByte(' ')
	b.WriteString(typ)
	b.WriteByte('\n')
}

// sample writes one line: name{labels} value. labels is pre-rendered
// (without braces) so callers control label order, as engines differ.
func sample(b *strings.Builder, name, labels, value string) {
	b.WriteString(name)
	if labels != "" {
		b.WriteByte('{')
		b.WriteString(labels)
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(value)
	b.WriteByte('\n')
}
