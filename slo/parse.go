package slo

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ttftop/ttftop/telemetry"
)

// ParseDuration is the one duration parser of ttftop: flags, config
// files and thresholds all read durations with it. It takes Prometheus's
// forms ("2w", "28d", "1d12h", "5m", "1y": prometheus/common's
// model.ParseDuration) and Go's ("1.5s", "250us"), and fractional days or
// weeks ("1.5d"). A negative duration is an error: no window, period or
// threshold can be one.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, errors.New("empty duration")
	}
	if strings.HasPrefix(in, "-") {
		return 0, fmt.Errorf("negative duration %q: a duration is 0 or more", in)
	}
	if d, err := model.ParseDuration(in); err == nil {
		return time.Duration(d), nil
	}
	rest := in
	var total time.Duration
	for _, u := range []struct {
		suffix byte
		d      time.Duration
	}{{'w', 7 * 24 * time.Hour}, {'d', 24 * time.Hour}} {
		i := strings.IndexByte(rest, u.suffix)
		if i < 0 {
			continue
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
			return 0, fmt.Errorf("invalid duration %q (use e.g. 50ms, 5s, 5m, 28d)", in)
		}
		total += time.Duration(n * float64(u.d))
		rest = rest[i+1:]
	}
	if rest == "" {
		return total, nil
	}
	d, err := time.ParseDuration(rest)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid duration %q (use e.g. 50ms, 5s, 5m, 28d)", in)
	}
	return total + d, nil
}

// ParseRatio reads "1%" as 0.01 and "0.01" as 0.01. A bare number must be
// below 1, so "1" is refused rather than read as 100 %.
func ParseRatio(s string) (float64, error) {
	in := strings.TrimSpace(s)
	num, pct := strings.CutSuffix(in, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) || v < 0 {
		return 0, fmt.Errorf("invalid ratio %q (use e.g. 1%% or 0.01)", in)
	}
	if pct {
		if v > 100 {
			return 0, fmt.Errorf("invalid ratio %q: over 100%%", in)
		}
		return v / 100, nil
	}
	if v >= 1 {
		return 0, fmt.Errorf("ambiguous ratio %q: write %s%% or a fraction below 1", in, num)
	}
	return v, nil
}

// ParsePercentile reads "95", "p95", "95%", "99.9" or "0.95" as a quantile
// in (0, 1).
func ParsePercentile(s string) (float64, error) {
	in := strings.TrimSpace(s)
	num := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(in, "p"), "P"), "%")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0 && v < 100) {
		return 0, fmt.Errorf("invalid percentile %q (use e.g. 95, p99 or 99.9)", in)
	}
	if v < 1 && !strings.HasSuffix(in, "%") && !strings.HasPrefix(strings.ToLower(in), "p") {
		return v, nil // already a fraction: 0.95
	}
	return v / 100, nil
}

// ParseThreshold reads a threshold in the natural unit of sig and returns
// base units: durations for latency signals ("5s", "50ms" → seconds),
// ratios for percentage signals ("1%" → 0.01), plain numbers otherwise.
func ParseThreshold(sig telemetry.Signal, s string) (float64, error) {
	switch sig.Info().Unit {
	case "ms":
		d, err := ParseDuration(s)
		if err != nil {
			return 0, err
		}
		return d.Seconds(), nil
	case "%":
		return ParseRatio(s)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("invalid threshold %q", s)
	}
	return v, nil
}
