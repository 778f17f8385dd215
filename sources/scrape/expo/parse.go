package expo

import (
	"fmt"
	"strings"
)

// Options control Parse.
type Options struct {
	// Want reports whether a family (by name, after StripPrefix) is
	// parsed; nil parses every family. Skipped families still appear in
	// Page.Names, at the cost of one map lookup per line.
	Want func(name string) bool
	// StripPrefix is removed from every metric name that starts with it
	// (relabelled exporters, e.g. "kserve_").
	StripPrefix string
	// OpenMetrics parses OpenMetrics 1.0 text: counters are declared
	// without "_total", "_created" samples belong to their family, and the
	// page must end with "# EOF".
	OpenMetrics bool
	// SizeHint is the expected number of families (the previous page's
	// len(Names)), to size maps once.
	SizeHint int
}

// Parse parses one exposition. On a syntax error it returns the page parsed
// so far and a *ParseError; callers should treat the page as failed. It
// never panics: a panic inside is returned as an error.
func Parse(body string, opt Options) (page *Page, err error) {
	hint := max(opt.SizeHint, 16)
	p := &parser{
		opt:     opt,
		s:       body,
		page:    &Page{Families: map[string]*Family{}, Names: make([]string, 0, hint)},
		fams:    make(map[string]*famState, hint),
		created: map[string]*famState{},
	}
	defer func() {
		if r := recover(); r != nil {
			err = &ParseError{Line: p.line, Msg: fmt.Sprintf("internal parser error: %v", r)}
		}
	}()
	err = p.run()
	p.finish()
	return p.page, err
}

type famState struct {
	name  string
	typ   Type
	typed bool
	fam   *Family // nil when the family is skipped
}

type parser struct {
	opt     Options
	s       string
	line    int
	page    *Page
	fams    map[string]*famState // by family name
	created map[string]*famState // OpenMetrics "<name>_created" → family
	eof     bool

	states []famState // allocated in chunks; pointers stay valid
	labels []Label    // scratch for one line
	key    []byte     // scratch series key

	// Consecutive lines mostly share a name (a histogram's buckets) and a
	// label set: remember the last resolution.
	lastName   string
	lastFam    *famState
	lastRole   role
	lastSeries *Series
	lastFamily *Family
}

// role says which part of a family a sample line is.
type role uint8

const (
	roleValue role = iota
	roleBucket
	roleSum
	roleCount
	roleCreated
	roleQuantile
)

func (p *parser) run() error {
	s := p.s
	for pos := 0; pos < len(s); {
		if p.eof {
			return p.errorf("unexpected data after # EOF")
		}
		p.line++
		end := strings.IndexByte(s[pos:], '\n')
		var line string
		if end < 0 {
			line = s[pos:]
			if skipBlank(line) != "" {
				return p.errorf("unexpected end of input stream")
			}
			break
		}
		line = s[pos : pos+end]
		pos += end + 1
		line = skipBlank(line)
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if line == "" {
			continue
		}
		var err error
		if line[0] == '#' {
			err = p.comment(line)
		} else {
			err = p.sample(line)
		}
		if err != nil {
			return err
		}
	}
	if p.opt.OpenMetrics && !p.eof {
		return p.errorf("data does not end with # EOF")
	}
	return nil
}

func (p *parser) errorf(format string, args ...any) error {
	return &ParseError{Line: p.line, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) strip(name string) string {
	if pre := p.opt.StripPrefix; pre != "" && len(name) > len(pre) && strings.HasPrefix(name, pre) {
		return name[len(pre):]
	}
	return name
}

// comment handles "# HELP", "# TYPE", "# UNIT", "# EOF"; other comments are
// ignored.
func (p *parser) comment(line string) error {
	rest := skipBlank(line[1:])
	word, rest := cutWord(rest)
	switch word {
	case "EOF":
		if p.opt.OpenMetrics {
			p.eof = true
		}
		return nil
	case "HELP", "UNIT":
		return nil
	case "TYPE":
		p.lastFam = nil // a TYPE line can change how names resolve
	default:
		return nil
	}
	name, rest := cutWord(rest)
	typWord, _ := cutWord(strings.ReplaceAll(rest, `\`, "")) // expfmt drops backslashes here
	if name == "" || typWord == "" {
		return nil // like expfmt: an incomplete TYPE line is a comment
	}
	if strings.HasPrefix(name, `"`) {
		uq, ok := unquoteName(name)
		if !ok {
			return p.errorf("invalid metric name in TYPE line: %s", quote(name))
		}
		name = uq
	}
	if !validName(name) {
		return p.errorf("invalid metric name in TYPE line: %s", quote(name))
	}
	typ, ok := parseType(typWord)
	if !ok {
		return p.errorf("unknown metric type %s", quote(typWord))
	}
	name = p.strip(name)
	canonical := name
	if p.opt.OpenMetrics {
		switch {
		case typ == Counter:
			canonical = name + "_total"
		case strings.EqualFold(typWord, "info"):
			canonical = name + "_info"
		}
	}
	fs := p.fams[canonical]
	if fs != nil {
		if fs.typed && fs.typ != typ {
			return p.errorf("second TYPE line for metric name %s", quote(canonical))
		}
		if !fs.typed && fs.fam != nil && len(fs.fam.Series) > 0 {
			return p.errorf("TYPE line for metric name %s after its samples", quote(canonical))
		}
		fs.typ, fs.typed = typ, true
		if fs.fam != nil {
			fs.fam.Type = typ
		}
	} else {
		fs = p.newFamily(canonical, typ)
		fs.typed = true
	}
	if p.opt.OpenMetrics && (typ == Counter || typ == Histogram || typ == Summary) {
		p.created[name+"_created"] = fs
	}
	return nil
}

func (p *parser) newFamily(name string, typ Type) *famState {
	if len(p.states) == cap(p.states) {
		p.states = make([]famState, 0, 64)
	}
	p.states = append(p.states, famState{name: name, typ: typ})
	fs := &p.states[len(p.states)-1]
	if p.opt.Want == nil || p.opt.Want(name) {
		fs.fam = &Family{Name: name, Type: typ}
		p.page.Families[name] = fs.fam
	}
	p.fams[name] = fs
	p.page.Names = append(p.page.Names, name)
	return fs
}

// resolve finds the family and role of a sample name.
func (p *parser) resolve(name string) (*famState, role) {
	if p.lastFam != nil && name == p.lastName {
		return p.lastFam, p.lastRole
	}
	fs, r := p.lookup(name)
	p.lastName, p.lastFam, p.lastRole = name, fs, r
	return fs, r
}

func (p *parser) lookup(name string) (*famState, role) {
	if fs := p.fams[name]; fs != nil {
		switch fs.typ {
		case Summary:
			return fs, roleQuantile
		case Histogram:
			return fs, roleValue // a bare histogram sample: reported by sample()
		}
		return fs, roleValue
	}
	if p.opt.OpenMetrics {
		if fs := p.created[name]; fs != nil {
			return fs, roleCreated
		}
	}
	for _, sfx := range [...]struct {
		s string
		r role
	}{{"_bucket", roleBucket}, {"_count", roleCount}, {"_sum", roleSum}} {
		if !strings.HasSuffix(name, sfx.s) {
			continue
		}
		fs := p.fams[name[:len(name)-len(sfx.s)]]
		if fs != nil && (fs.typ == Histogram || (fs.typ == Summary && sfx.r != roleBucket)) {
			return fs, sfx.r
		}
	}
	return p.newFamily(name, Untyped), roleValue
}

func cutWord(s string) (word, rest string) {
	s = skipBlank(s)
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\t' {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}
