package table

import "testing"

// A figure too wide for its cell is shortened without losing a number:
// a pair in one unit says it once, "no data" becomes n/d; what fits, or
// cannot be shortened so, is left as it is.
func TestShortFigure(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"~31.7ms/31.8ms", 13, "~31.7/31.8ms"},
		{"31.7ms/31.8ms", 13, "31.7ms/31.8ms"},
		{"~999ms/1.08s", 11, "~999ms/1.08s"},
		{"no data", 5, "n/d"},
		{"no data", 7, "no data"},
		{"~46%", 5, "~46%"},
	} {
		if got := shortFigure(c.in, c.width); got != c.want {
			t.Errorf("shortFigure(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}
