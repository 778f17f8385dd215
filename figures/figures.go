// Package figures writes numbers, durations and ages as people read them,
// with about three significant digits: one home for the rounding that the
// dashboard, the text and JSON reports' labels and the notifications'
// summaries share, so an alert says what the screen says. (tui/format
// builds display cells on it.)
package figures

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// sig3 formats v with about three significant digits and no trailing
// zeros, so a value that moves in the fourth digit does not repaint the
// cell every refresh (less flicker, fewer bytes over SSH).
func sig3(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a == 0:
		return "0"
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

// trim drops trailing fractional zeros so "4.0ms" reads "4ms".
func trim(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// Millis formats a latency given in milliseconds: 0.42ms, 4.2ms, 812ms,
// 1.93s, 12.4s, 2m05s.
func Millis(ms float64) string {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return "—"
	}
	switch a := math.Abs(ms); {
	case a < 1000:
		return trim(sig3(ms)) + "ms"
	case a < 60_000:
		return trim(sig3(ms/1000)) + "s"
	default:
		d := time.Duration(ms * float64(time.Millisecond)).Round(time.Second)
		return Duration(d)
	}
}

// Percent formats a value already in percent (0–100).
func Percent(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	if math.Abs(v) >= 10 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64) + "%"
	}
	return trim(strconv.FormatFloat(v, 'f', 1, 64)) + "%"
}

// Number formats a count or rate.
func Number(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	if math.Abs(v) >= 10_000 {
		return trim(strconv.FormatFloat(v/1000, 'f', 1, 64)) + "k"
	}
	return trim(sig3(v))
}

// MiB formats a memory size given in MiB.
func MiB(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	if math.Abs(v) >= 1024 {
		return trim(sig3(v/1024)) + "GiB"
	}
	return trim(sig3(v)) + "MiB"
}

// Value formats v in a display unit as reported by telemetry.SignalInfo.
func Value(v float64, unit string) string {
	switch unit {
	case "ms":
		return Millis(v)
	case "%":
		return Percent(v)
	case "MiB":
		return MiB(v)
	case "tok/s", "req", "":
		return Number(v)
	}
	return Number(v) + unit
}

// Age formats how long ago something happened, coarsely: 14s, 3m, 2h, 5d.
func Age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d"
}

// Duration formats a span compactly: 45s, 4m12s, 1h05m, 3d4h.
func Duration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m" + two(int(d%time.Minute/time.Second)) + "s"
	case d < 24*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h" + two(int(d%time.Hour/time.Minute)) + "m"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d" + strconv.Itoa(int(d%(24*time.Hour)/time.Hour)) + "h"
}

func two(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// Window formats a refresh interval or time window: 250ms, 1s, 5m, 1h.
func Window(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.Itoa(int(d/time.Millisecond)) + "ms"
	case d < time.Minute && d%time.Second == 0:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour && d%time.Minute == 0:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	}
	return d.String()
}
