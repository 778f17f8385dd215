package table

import (
	"strconv"

	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
)

// whyCell is the WHY cell: the leading cause's word ("kv_cache"), with
// "+N" when more causes are named and room allows; blank when the row is
// healthy or not yet diagnosed (the SLO cell says which state it is in).
func whyCell(r *Row, width int, roles *themes.Roles, ellipsis string) string {
	c := r.Cause
	if c == nil {
		return roles.Text.S(common.Spaces(width))
	}
	word := string(c.Cause)
	if r.MoreCauses > 0 {
		if more := word + "+" + strconv.Itoa(r.MoreCauses); common.Width(more) <= width {
			word = more
		}
	}
	paint := roles.Bad
	if c.Cause == diagnosis.Unclear {
		paint = roles.Warn
	}
	return paint.S(common.Fit(word, width, ellipsis))
}
