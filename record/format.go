package record

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// Format identifies a recording in its header line. Version 2 added the
// settings lines and alert lines in segment preambles; version 3 the
// closing line Close writes, so that a recording cut on a line boundary
// (its writer killed) is told from a finished one. This build reads
// versions 1 to 3. (An older reader would count a new kind of line as an
// observation and call the file damaged, so the version says it.)
const (
	FormatName    = "ttftop-recording"
	FormatVersion = 3
	// closingSince is the first version whose writer ends a recording
	// with a closing line.
	closingSince = 3
)

// Line kinds that are not observations.
const (
	kindHeader     telemetry.Kind = "header"
	kindCheckpoint telemetry.Kind = "checkpoint"
	kindSettings   telemetry.Kind = "settings"
	kindEnd        telemetry.Kind = "end" // the closing line (version 3)
	// KindAlert marks an alert transition line (Writer.WriteAlert).
	KindAlert telemetry.Kind = "alert"
)

// line is one JSON line. It embeds the observation and shadows its float
// fields that may be non-finite: encoding/json refuses NaN and ±Inf, and
// every histogram has a +Inf bucket. The other fields serve the header,
// checkpoint, state and alert lines, so every line decodes in one pass.
type line struct {
	telemetry.Observation
	Value   jsonFloat    `json:"value,omitempty"`
	Buckets []jsonBucket `json:"buckets,omitempty"`

	// State marks a segment's preamble: a repeat of an earlier
	// observation, fed only when reading starts at this segment.
	State bool `json:"state,omitempty"`

	Alert    json.RawMessage `json:"alert,omitempty"`
	Settings json.RawMessage `json:"settings,omitempty"`

	Format       string `json:"format,omitempty"`
	Version      int    `json:"version,omitempty"`
	Seq          int    `json:"seq,omitempty"`
	LineNo       int64  `json:"line,omitempty"`
	Observations int64  `json:"observations,omitempty"`
}

// jsonFloat writes NaN and ±Inf as strings.
type jsonFloat float64

// MarshalJSON writes finite values as numbers, others as "NaN", "+Inf",
// "-Inf" (Prometheus's spelling).
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// UnmarshalJSON reads a number, or a float in a string (what
// MarshalJSON and jsonLE write).
func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := parseFloatString(s)
		*f = jsonFloat(v)
		return err
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("invalid float %s", b)
	}
	*f = jsonFloat(v)
	return nil
}

// parseFloatString reads a float written as a string ("0.5", "+Inf",
// "NaN"); the fast decoder uses it too, so both paths agree.
func parseFloatString(s string) (float64, error) {
	switch s {
	case "NaN":
		return math.NaN(), nil
	case "+Inf", "Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid float %q", s)
	}
	return v, nil
}

// jsonLE writes a bucket bound as a string ("0.5", "+Inf"), the way
// telemetry.Bucket and Prometheus do.
type jsonLE float64

// MarshalJSON writes the bound as a string.
func (f jsonLE) MarshalJSON() ([]byte, error) {
	b := append([]byte{'"'}, strconv.FormatFloat(float64(f), 'g', -1, 64)...)
	return append(b, '"'), nil
}

// UnmarshalJSON reads a bound as a string or a number.
func (f *jsonLE) UnmarshalJSON(b []byte) error { return (*jsonFloat)(f).UnmarshalJSON(b) }

type jsonBucket struct {
	UpperBound jsonLE    `json:"le"`
	Count      jsonFloat `json:"count"`
}

// encodeObservation appends o's line (with a newline) to buf.
func encodeObservation(buf []byte, o telemetry.Observation, state bool) ([]byte, error) {
	l := line{Observation: o, Value: jsonFloat(o.Value), State: state}
	if len(o.Buckets) > 0 {
		l.Buckets = make([]jsonBucket, len(o.Buckets))
		for i, b := range o.Buckets {
			l.Buckets[i] = jsonBucket{jsonLE(b.UpperBound), jsonFloat(b.Count)}
		}
	}
	l.Observation.Buckets = nil
	l.Probe = finiteProbe(o.Probe)
	l.Live = finiteLive(o.Live)
	return appendJSON(buf, &l)
}

func appendJSON(buf []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return buf, err
	}
	buf = append(buf, b...)
	return append(buf, '\n'), nil
}

// observation rebuilds the telemetry.Observation of a decoded line.
func (l *line) observation() telemetry.Observation {
	o := l.Observation
	o.Value = float64(l.Value)
	if len(l.Buckets) > 0 {
		o.Buckets = make([]telemetry.Bucket, len(l.Buckets))
		for i, b := range l.Buckets {
			o.Buckets[i] = telemetry.Bucket{UpperBound: float64(b.UpperBound), Count: float64(b.Count)}
		}
	}
	return o
}

// finiteProbe returns p, or a copy with non-finite figures zeroed (zero
// means "not measured" in a ProbeRecord). The probe never produces them;
// this keeps one bad value from losing the whole record.
func finiteProbe(p *telemetry.ProbeRecord) *telemetry.ProbeRecord {
	if p == nil {
		return nil
	}
	bad := !finite(p.TTFTms) || !finite(p.TPOTms) || !finite(p.E2Ems)
	for _, v := range p.ITLms {
		bad = bad || !finite(v)
	}
	if !bad {
		return p
	}
	c := *p
	c.TTFTms, c.TPOTms, c.E2Ems = zeroIfNotFinite(c.TTFTms), zeroIfNotFinite(c.TPOTms), zeroIfNotFinite(c.E2Ems)
	c.ITLms = make([]float64, len(p.ITLms))
	for i, v := range p.ITLms {
		c.ITLms[i] = zeroIfNotFinite(v)
	}
	return &c
}

func finiteLive(l *telemetry.LiveText) *telemetry.LiveText {
	if l == nil || finite(l.TPS) {
		return l
	}
	c := *l
	c.TPS = 0
	return &c
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func zeroIfNotFinite(v float64) float64 {
	if finite(v) {
		return v
	}
	return 0
}

// headerLine and checkpointLine build the non-observation lines.
func headerLine(at time.Time) line {
	return line{Observation: telemetry.Observation{Kind: kindHeader, At: at}, Format: FormatName, Version: FormatVersion}
}

func checkpointLine(at time.Time, seq int, lineNo, observations int64) line {
	return line{Observation: telemetry.Observation{Kind: kindCheckpoint, At: at}, Seq: seq, LineNo: lineNo, Observations: observations}
}
