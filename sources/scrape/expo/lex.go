package expo

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ttftop/ttftop/telemetry"
)

// readName reads a metric name at the start of a line; "" when the line
// starts with "{".
func (p *parser) readName(line string) (name, rest string, err error) {
	if line[0] == '{' {
		return "", line, nil
	}
	name, rest, quoted, err := p.readToken(line, true)
	switch {
	case err != nil:
		return "", "", err
	case name == "":
		return "", "", p.errorf("invalid metric name at %s", quote(line))
	case quoted && !validName(name):
		return "", "", p.errorf("invalid metric name %s", quote(name))
	}
	return name, rest, nil
}

// readToken reads a name: bare name bytes (with ':' for metric names),
// optionally ended by a quoted part with escapes (as expfmt reads
// `a"b.c"` and `"x"`); quoted says whether there was one.
func (p *parser) readToken(s string, metric bool) (tok, rest string, quoted bool, err error) {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i > 0 && c >= '0' && c <= '9') || (metric && c == ':')) {
			break
		}
	}
	if i < len(s) && s[i] == '"' {
		v, r, qerr := p.readQuoted(s[i+1:])
		if qerr != nil {
			return "", "", true, qerr
		}
		return s[:i] + v, r, true, nil
	}
	return s[:i], s[i:], false, nil
}

// readLabels parses label pairs after "{". When nameAllowed (the line
// started with "{"), one token without "=" — bare or quoted, anywhere in
// the braces — is the metric name, as expfmt accepts.
func (p *parser) readLabels(s string, nameAllowed bool) (metricName, rest string, err error) {
	seenName := false
	for {
		s = skipBlank(s)
		if s == "" {
			return "", "", p.errorf("unexpected end of label set")
		}
		if s[0] == '}' {
			return metricName, s[1:], nil
		}
		tok, r, _, terr := p.readToken(s, false)
		if terr != nil {
			return "", "", terr
		}
		s = r
		if tok == "" {
			return "", "", p.errorf("invalid label name at %s", quote(s))
		}
		s = skipBlank(s)
		if s == "" || s[0] != '=' {
			if nameAllowed && s != "" && (s[0] == ',' || s[0] == '}') {
				if seenName {
					return "", "", p.errorf("multiple metric names in braces")
				}
				metricName, seenName = tok, true
				if s[0] == ',' {
					s = s[1:]
				}
				continue
			}
			return "", "", p.errorf("expected '=' after label name %s", quote(tok))
		}
		if tok == "__name__" {
			return "", "", p.errorf("label name %q is reserved", "__name__")
		}
		s = skipBlank(s[1:])
		if s == "" || s[0] != '"' {
			return "", "", p.errorf("expected '\"' at start of label value")
		}
		v, r, qerr := p.readQuoted(s[1:])
		if qerr != nil {
			return "", "", qerr
		}
		p.labels = append(p.labels, Label{Name: tok, Value: v})
		s = skipBlank(r)
		switch {
		case s == "":
			return "", "", p.errorf("unexpected end of label set")
		case s[0] == ',':
			s = s[1:]
		case s[0] == '}':
		default:
			return "", "", p.errorf("unexpected %s after label value", quote(s[:1]))
		}
	}
}

// readQuoted reads a quoted string body (after the opening quote) with the
// text format's escapes \\ \" \n.
func (p *parser) readQuoted(s string) (val, rest string, err error) {
	if i := strings.IndexByte(s, '"'); i >= 0 && strings.IndexByte(s[:i], '\\') < 0 {
		return s[:i], s[i+1:], nil // fast path: no escapes
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			if i+1 >= len(s) {
				return "", "", p.errorf("unterminated escape sequence")
			}
			i++
			switch s[i] {
			case '\\':
				b.WriteByte('\\')
			case '"':
				b.WriteByte('"')
			case 'n':
				b.WriteByte('\n')
			default:
				return "", "", p.errorf("invalid escape sequence '\\%s'", quote(s[i:i+1]))
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", p.errorf("unterminated quoted string")
}

// readValue reads the value and an optional timestamp; an OpenMetrics
// exemplar ("# {...} v") after them is ignored.
func (p *parser) readValue(rest string, needSpace bool) (float64, error) {
	if needSpace && rest == "" {
		return 0, p.errorf("expected a value after the metric name")
	}
	tok, rest := cutWord(rest)
	v, err := parseFloat(tok)
	if err != nil {
		return 0, p.errorf("expected float as value, got %s", quote(tok))
	}
	ts, rest := cutWord(rest)
	if ts == "" || ts == "#" {
		return v, nil
	}
	if _, err := parseFloat(ts); err != nil {
		return 0, p.errorf("expected number as timestamp, got %s", quote(ts))
	}
	if more, _ := cutWord(rest); more != "" && more != "#" {
		return 0, p.errorf("unexpected %s after timestamp", quote(more))
	}
	return v, nil
}

func parseFloat(s string) (float64, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 'p' || c == 'P' || c == '_' { // as expfmt: no hex floats, no digit separators
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.ParseFloat(s, 64)
}

// skipBlank drops leading spaces and tabs.
func skipBlank(s string) string {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[i:]
}

// validName accepts legacy names and any non-empty valid UTF-8 name (the
// UTF-8 validation scheme of quoted names).
func validName(s string) bool {
	return s != "" && utf8.ValidString(s)
}

func unquoteName(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	return s[1 : len(s)-1], true
}

// sortBuckets sorts a series' buckets by upper bound (stable), cheaply
// when they already are.
func sortBuckets(b []telemetry.Bucket) {
	if sort.SliceIsSorted(b, func(i, j int) bool { return b[i].UpperBound < b[j].UpperBound }) {
		return
	}
	sort.SliceStable(b, func(i, j int) bool { return b[i].UpperBound < b[j].UpperBound })
}
