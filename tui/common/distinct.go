package common

import (
	"slices"
	"strings"
)

// MaxDistinctNames bounds the names Distinct compares with each other
// (its cost grows with the square of their number); beyond it names are
// elided in the middle only.
const MaxDistinctNames = 256

// Distinct shortens each of names (plain, sanitised text) to at most width
// cells so that the short forms still tell the names apart: NewNamer over
// the names themselves.
func Distinct(names []string, width int, ellipsis string) map[string]string {
	return NewNamer(names, ellipsis).Fit(names, names, width)
}

// Namer shortens names against a corpus: the words it shares with the
// most names of the corpus go first (host parts every row has,
// "Instruct", the org of a model), each run of dropped words shown as one
// ellipsis, as long as no other name of the set it must stand apart from
// would read the same (an ellipsis standing for any text); words only it
// has ("70B", "FP8", "AWQ") stay. What still does not fit is cut in the
// middle.
//
// A name may have a group part (Keep): the leading words that say which
// group a row is of ("prod/a/" of PromQL's group_by). They are what tells
// the same model in two groups apart, so they are dropped last, after
// every word of the rest.
type Namer struct {
	freq     map[string]int
	ellipsis string
	keep     map[string]int
}

// Keep marks the first n bytes of name as its group part.
func (n *Namer) Keep(name string, prefix int) {
	if n.keep == nil {
		n.keep = map[string]int{}
	}
	n.keep[name] = prefix
}

// NewNamer counts the words of corpus.
func NewNamer(corpus []string, ellipsis string) *Namer {
	n := &Namer{freq: map[string]int{}, ellipsis: ellipsis}
	for _, c := range corpus {
		seen := map[string]bool{}
		for _, t := range tokenize(c) {
			if t.word && !seen[t.text] {
				seen[t.text] = true
				n.freq[t.text]++
			}
		}
	}
	return n
}

// Fit shortens each of names to at most width cells, each still read as
// itself among among (usually a superset of names). The result is keyed
// by name.
func (n *Namer) Fit(names, among []string, width int) map[string]string {
	out := make(map[string]string, len(names))
	big := len(among) > MaxDistinctNames
	for _, name := range names {
		if _, done := out[name]; done {
			continue
		}
		if Width(name) <= width {
			out[name] = name
			continue
		}
		short := name
		if !big {
			short = n.shorten(name, among, width)
		}
		out[name] = strings.TrimRight(FitMiddle(short, width, n.ellipsis), " ")
	}
	return out
}

type token struct {
	text    string
	word    bool
	dropped bool
}

// tokenize splits a name into words (letters, digits and dots: "Qwen2.5",
// "127.0.0.1", "3.1") and the separators between them.
func tokenize(s string) []token {
	var out []token
	start := 0
	isWord := func(c byte) bool {
		return c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
	}
	for i := 1; i <= len(s); i++ {
		if i == len(s) || isWord(s[i]) != isWord(s[start]) {
			out = append(out, token{text: s[start:i], word: isWord(s[start])})
			start = i
		}
	}
	return out
}

// shorten drops the most shared words of one name while the result still
// identifies it and does not fit, then puts back what fits again.
func (n *Namer) shorten(name string, among []string, width int) string {
	toks := tokenize(name)
	order := make([]int, 0, len(toks))
	for i, t := range toks {
		if t.word {
			order = append(order, i) // words no other name has go last
		}
	}
	// Most shared first; among equals, numbers (a port, an address)
	// before names, then the first word (a host's own name), and words
	// of letters and digits ("70B", "Qwen2.5": sizes, versions) last;
	// else the leftmost (a model's org before its name).
	first := slices.IndexFunc(toks, func(t token) bool { return t.word })
	group := make([]bool, len(toks))
	for i, at := 0, 0; i < len(toks); i++ {
		group[i] = at < n.keep[name]
		at += len(toks[i].text)
	}
	rank := func(i int) int {
		switch {
		case numeric(toks[i].text):
			return 0
		case hasDigit(toks[i].text):
			return 3
		case i == first:
			return 2
		}
		return 1
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if group[a] != group[b] { // the group part goes last
			if group[a] {
				return 1
			}
			return -1
		}
		// Words of letters and digits (sizes, versions: "8B", "R1")
		// tell models apart even when shared, so every plain word goes
		// before any of them: the tail "8B" outlives "Distill".
		if sa, sb := sized(toks[a].text), sized(toks[b].text); sa != sb {
			if sa {
				return 1
			}
			return -1
		}
		if d := n.freq[toks[b].text] - n.freq[toks[a].text]; d != 0 {
			return d
		}
		return rank(a) - rank(b)
	})
	text := n.dropInOrder(toks, order, name, among, width)
	// Greedy drops can get stuck: a word dropped first ("99") made no
	// room, and the one that would ("ratio") cannot go with it. Each
	// word in turn is then kept to the last, the first that fits wins.
	for k := 0; Width(text) > width && k < len(order); k++ {
		retry := append(slices.Concat(order[:k], order[k+1:]), order[k])
		if try := n.dropInOrder(tokenize(name), retry, name, among, width); Width(try) <= width {
			text = try
		}
	}
	return text
}

// dropInOrder drops the words of toks at order, each while the result
// does not fit and still identifies name among among, then puts back what
// fits again.
func (n *Namer) dropInOrder(toks []token, order []int, name string, among []string, width int) string {
	text := render(toks, n.ellipsis)
	var dropped []int
	for _, i := range order {
		if Width(text) <= width {
			break
		}
		toks[i].dropped = true
		if !identifies(toks, name, among) {
			toks[i].dropped = false
			continue
		}
		dropped = append(dropped, i)
		text = render(toks, n.ellipsis)
	}
	// A later drop may have made room for an earlier one.
	for j := len(dropped) - 1; j >= 0 && Width(text) <= width; j-- {
		if !atRunEdge(toks, dropped[j]) {
			continue // it would split a run into two ellipses
		}
		toks[dropped[j]].dropped = false
		if try := render(toks, n.ellipsis); Width(try) <= width {
			text = try
			continue
		}
		toks[dropped[j]].dropped = true
	}
	return text
}

// sized: letters and digits both ("70B", "Qwen2.5", "H100").
func sized(w string) bool { return hasDigit(w) && !numeric(w) }

func hasDigit(w string) bool { return strings.ContainsAny(w, "0123456789") }

func numeric(w string) bool {
	for i := 0; i < len(w); i++ {
		if (w[i] < '0' || w[i] > '9') && w[i] != '.' {
			return false
		}
	}
	return true
}

// atRunEdge: the word at i starts or ends the name, or a kept word is
// next to it.
func atRunEdge(toks []token, i int) bool {
	kept := func(j, step int) bool {
		for ; j >= 0 && j < len(toks); j += step {
			if toks[j].word {
				return !toks[j].dropped
			}
		}
		return true
	}
	return kept(i-1, -1) || kept(i+1, 1)
}

// render writes the kept tokens, one ellipsis per run of dropped words
// (the separators around a run go with it).
func render(toks []token, ellipsis string) string {
	var b strings.Builder
	for i := 0; i < len(toks); i++ {
		if !toks[i].dropped {
			if !toks[i].word && (prevDropped(toks, i) || nextDropped(toks, i)) {
				continue
			}
			b.WriteString(toks[i].text)
			continue
		}
		b.WriteString(ellipsis)
		for i+1 < len(toks) && (toks[i+1].dropped || !toks[i+1].word) {
			i++
		}
	}
	return b.String()
}

func prevDropped(toks []token, i int) bool { return i > 0 && toks[i-1].dropped }

func nextDropped(toks []token, i int) bool { return i+1 < len(toks) && toks[i+1].dropped }

// identifies reports whether no other name reads as the shortened form:
// the kept pieces, in order, with anything where words were dropped.
func identifies(toks []token, name string, names []string) bool {
	pieces := pattern(toks)
	for _, other := range names {
		if other != name && matchPieces(pieces, other) {
			return false
		}
	}
	return true
}

// pattern is the kept text between dropped runs; an empty first or last
// piece means the form starts or ends with an ellipsis.
func pattern(toks []token) []string {
	pieces := []string{""}
	for i := 0; i < len(toks); i++ {
		if toks[i].dropped {
			pieces = append(pieces, "")
			for i+1 < len(toks) && (toks[i+1].dropped || !toks[i+1].word) {
				i++
			}
			continue
		}
		if !toks[i].word && (prevDropped(toks, i) || nextDropped(toks, i)) {
			continue
		}
		pieces[len(pieces)-1] += toks[i].text
	}
	return pieces
}

// matchPieces: s starts with the first piece, ends with the last, and has
// the ones between in order.
func matchPieces(pieces []string, s string) bool {
	if len(pieces) == 1 {
		return s == pieces[0]
	}
	first, last := pieces[0], pieces[len(pieces)-1]
	if !strings.HasPrefix(s, first) {
		return false
	}
	s = s[len(first):]
	for _, p := range pieces[1 : len(pieces)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, last)
}

// ReadsAs reports whether the shortened form shown, each ellipsis standing
// for any text, could be name: what a reader sees must match exactly one
// of the names for the rows to stay apart.
func ReadsAs(shown, name, ellipsis string) bool {
	pieces := strings.Split(shown, ellipsis)
	if !strings.HasPrefix(name, pieces[0]) {
		return false
	}
	rest := name[len(pieces[0]):]
	if len(pieces) == 1 {
		return rest == ""
	}
	for _, p := range pieces[1 : len(pieces)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return strings.HasSuffix(rest, pieces[len(pieces)-1])
}

// HostPrefix is "[scheme://]host:port/" of an endpoint name followed by
// more (its model), or "": the part a row's group line already shows.
func HostPrefix(ep string) string {
	start := 0
	if i := strings.Index(ep, "://"); i >= 0 {
		start = i + 3
	}
	slash := strings.Index(ep[start:], "/")
	if slash <= 0 || start+slash == len(ep)-1 || !strings.Contains(ep[start:start+slash], ":") {
		return ""
	}
	return ep[:start+slash+1]
}
