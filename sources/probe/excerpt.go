package probe

import (
	"regexp"
	"strings"
)

// maxExcerpt is the most characters of a body a message quotes.
const maxExcerpt = 120

// markupRE matches HTML markup: tags, comments, doctypes.
var markupRE = regexp.MustCompile(`(?s)<!--.*?-->|<[^>]*>`)

// bodyExcerpt is the start of an answer's body as one line a person
// reads: HTML markup dropped, white space (newlines too) folded to single
// spaces, cut at maxExcerpt characters. The caller sanitises it.
func bodyExcerpt(body []byte) string {
	s := string(body)
	if strings.HasPrefix(strings.TrimSpace(s), "<") {
		s = markupRE.ReplaceAllString(s, " ")
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxExcerpt {
		s = string(r[:maxExcerpt]) + "…"
	}
	return s
}

// excerptSuffix is ` (text/html): "excerpt"` for a message, or what of it
// is known.
func excerptSuffix(mediaType, excerpt string) string {
	out := ""
	if mediaType != "" {
		out = " (" + mediaType + ")"
	}
	if excerpt != "" {
		out += `: "` + excerpt + `"`
	}
	return out
}
