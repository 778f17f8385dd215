package expo

import (
	"fmt"

	"github.com/ttftop/ttftop/sanitize"
)

// ParseError is a syntax error that fails the whole page.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("exposition parse error in line %d: %s", e.Line, e.Msg)
}

// FamilyError is a semantic problem of one family.
type FamilyError struct {
	Family string
	Msg    string
}

func (e *FamilyError) Error() string {
	return fmt.Sprintf("metric %s: %s", e.Family, e.Msg)
}

// quote renders untrusted text for an error message: sanitised and capped.
func quote(s string) string {
	const limit = 80
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return `"` + sanitize.Text(s) + `"`
}
