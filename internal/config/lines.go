package config

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// findKey is the line of the key (or list item) at path in doc, a string
// per mapping key and an int per list index, and whether the whole path
// is in doc. A missing key (a value inherited from a default) gives the
// line of the deepest part found; a missing list item (an entry added
// from flags, not the file) gives 0, as does a config without a document.
func findKey(doc *yaml.Node, path ...any) (line int, found bool) {
	if doc == nil {
		return 0, false
	}
	n := doc
	for _, p := range path {
		for n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
			n = n.Content[0]
		}
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		next := (*yaml.Node)(nil)
		switch k := p.(type) {
		case string:
			for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					line, next = n.Content[i].Line, n.Content[i+1]
					break
				}
			}
		case int:
			if n.Kind != yaml.SequenceNode || k < 0 || k >= len(n.Content) {
				return 0, false
			}
			next = n.Content[k]
			line = next.Line
		}
		if next == nil {
			return line, false
		}
		n = next
	}
	return line, true
}

// inFile reports whether the key at path is written in the config's file.
func (c *Config) inFile(path ...any) bool {
	_, found := findKey(c.doc, path...)
	return found
}

// at prefixes msg with "line N: " when the config came from a file and
// path is in it. ok is false when the entry at path holds a value the
// decoder already refused: its mistake is said once, not again as a
// validation error of the value left unset.
func (c *Config) at(msg string, path ...any) (_ string, ok bool) {
	first, last := keySpan(c.doc, path...)
	for _, l := range c.decodeErrs {
		if first > 0 && l >= first && l <= last {
			return "", false
		}
	}
	if first > 0 {
		return fmt.Sprintf("line %d: %s", first, msg), true
	}
	return msg, true
}

// keySpan is findKey's line and the last line of what the key holds.
func keySpan(doc *yaml.Node, path ...any) (first, last int) {
	first, _ = findKey(doc, path...)
	last = first
	if n := nodeAt(doc, path...); n != nil {
		last = max(last, lastLine(n))
	}
	return first, last
}

// nodeAt is the value at path in doc, or the deepest one on the way when
// the path is not all there (a key left to its default); nil without a
// document.
func nodeAt(doc *yaml.Node, path ...any) *yaml.Node {
	n := doc
	for _, p := range path {
		for n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
			n = n.Content[0]
		}
		if n == nil {
			return nil
		}
		var next *yaml.Node
		switch k := p.(type) {
		case string:
			for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					next = n.Content[i+1]
					break
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && k >= 0 && k < len(n.Content) {
				next = n.Content[k]
			}
		}
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

func lastLine(n *yaml.Node) int {
	l := n.Line
	for _, c := range n.Content {
		l = max(l, lastLine(c))
	}
	return l
}

// syntaxError places a YAML syntax error on its line. The parser names
// the line where the enclosing block began (a bad indent on line 4 of a
// file whose mapping starts on line 1 reads "line 1"); the line meant is
// the first one whose addition makes the file unparseable.
func syntaxError(data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ": "); i >= 0 {
			msg = rest[i+2:]
		}
	}
	return fmt.Errorf("line %d: %s", syntaxLine(data), msg)
}

// syntaxLine is the first line n such that lines 1..n do not parse
// (binary search: a document cut after a line parses up to its mistake).
func syntaxLine(data []byte) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	parses := func(n int) bool {
		var doc yaml.Node
		return yaml.Unmarshal(bytes.Join(lines[:n], nil), &doc) == nil
	}
	lo, hi := 1, len(lines)
	for lo < hi {
		if mid := (lo + hi) / 2; parses(mid) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// lineNumbers are the lines the "line N: …" messages name.
func lineNumbers(msgs []string) []int {
	var out []int
	for _, m := range msgs {
		if n, ok := lineOf(m); ok {
			out = append(out, n)
		}
	}
	return out
}

func lineOf(msg string) (int, bool) {
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return 0, false
	}
	num, _, _ := strings.Cut(rest, ":")
	n, err := strconv.Atoi(num)
	return n, err == nil
}

// byLine orders a file's errors as they stand in it: by line, those
// without one (entries added from flags) last, in the order found.
func byLine(errs []string) []string {
	all := slices.Clone(errs)
	slices.SortStableFunc(all, func(a, b string) int {
		la, okA := lineOf(a)
		lb, okB := lineOf(b)
		switch {
		case okA && okB:
			return la - lb
		case okA:
			return -1
		case okB:
			return 1
		}
		return 0
	})
	return all
}
