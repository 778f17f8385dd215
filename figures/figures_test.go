package figures

import (
	"testing"
	"time"
)

func TestValues(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Millis(0.42), "0.42ms"}, {Millis(4.0), "4ms"}, {Millis(812.4), "812ms"}, {Millis(1934), "1.93s"},
		{Millis(12400), "12.4s"}, {Millis(125000), "2m05s"}, {Percent(41.2), "41%"}, {Percent(4.25), "4.2%"},
		{Number(83.81), "83.8"}, {Number(12345), "12.3k"}, {MiB(61000), "59.6GiB"}, {Age(14 * time.Second), "14s"},
		{Age(3 * time.Hour), "3h"}, {Duration(252 * time.Second), "4m12s"}, {Window(250 * time.Millisecond), "250ms"},
		{Window(5 * time.Minute), "5m"}, {Window(time.Hour), "1h"},
	} {
		if c.got != c.want {
			t.Errorf("got %q want %q", c.got, c.want)
		}
	}
}
