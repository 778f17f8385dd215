package record

import (
	"encoding/json"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// decodeLine parses one line into l. Replaying an hour of a busy recording
// decodes over a million lines and encoding/json takes several
// microseconds for each (reflection, an Unmarshaler per float), so the
// lines ttftop writes are parsed by hand. Anything the fast path does
// not handle is decoded again by encoding/json, whose verdict wins: the
// fast path can only be faster, never stricter or different
// (FuzzFastDecode checks this).
func decodeLine(b []byte, l *line, in *interner) error {
	*l = line{}
	if err := fastDecode(b, l, in); err == nil {
		return nil
	}
	*l = line{}
	return json.Unmarshal(b, l)
}

func fastDecode(b []byte, l *line, in *interner) error {
	s := &scanner{b: b}
	if err := s.object(func(key []byte) error { return s.lineMember(key, l, in) }); err != nil {
		return err
	}
	return s.end()
}

// lineMember decodes one member of a line. switch string(key) does not
// allocate.
func (s *scanner) lineMember(key []byte, l *line, in *interner) error {
	k := string(key)
	if s.null() {
		// encoding/json leaves a scalar as it was but clears a pointer or
		// slice: leave those (never written) to it.
		if !lineScalar(k) {
			return errSlow
		}
		return nil
	}
	var err error
	switch k {
	case "kind":
		var v []byte
		v, err = s.str()
		l.Kind = telemetry.Kind(in.get(v))
	case "at":
		l.At, err = s.time()
	case "endpoint":
		var v []byte
		v, err = s.str()
		l.Endpoint = in.get(v)
	case "signal":
		var v []byte
		v, err = s.str()
		l.Signal = telemetry.Signal(in.get(v))
	case "source":
		var v []byte
		v, err = s.str()
		l.Source = in.get(v)
	case "error":
		l.Err, err = s.string()
	case "format":
		l.Format, err = s.string()
	case "value":
		var f float64
		f, err = s.float()
		l.Value = jsonFloat(f)
	case "interval":
		var n int64
		n, err = s.int()
		l.Interval = time.Duration(n)
	case "approx":
		l.Approx, err = s.bool()
	case "state":
		l.State, err = s.bool()
	case "seq":
		var n int64
		n, err = s.int()
		l.Seq = int(n)
	case "version":
		var n int64
		n, err = s.int()
		l.Version = int(n)
	case "line":
		l.LineNo, err = s.int()
	case "observations":
		l.Observations, err = s.int()
	case "buckets":
		l.Buckets, err = s.buckets()
	case "probe":
		if l.Probe == nil {
			l.Probe = &telemetry.ProbeRecord{}
		}
		err = s.probe(l.Probe)
	case "status":
		if l.Status == nil {
			l.Status = &telemetry.SourceStatus{}
		}
		err = s.status(l.Status)
	case "info", "live", "alert", "settings":
		// Rare lines: encoding/json on the member's bytes.
		var raw []byte
		if raw, err = s.value(); err != nil {
			return err
		}
		switch k {
		case "info":
			err = json.Unmarshal(raw, &l.Info)
		case "live":
			err = json.Unmarshal(raw, &l.Live)
		case "settings":
			err = json.Unmarshal(raw, &l.Settings) // copies, as alert
		default:
			err = json.Unmarshal(raw, &l.Alert) // copies: the line buffer is reused
		}
	default:
		// Unknown members (and encoding/json's case-insensitive matches
		// of known ones): the slow path decides.
		return errSlow
	}
	if err != nil {
		return errSlow
	}
	return nil
}

// lineScalar: members whose null encoding/json ignores.
func lineScalar(key string) bool {
	switch key {
	case "kind", "at", "endpoint", "signal", "source", "error", "format", "value", "interval", "approx", "state", "seq", "version", "line", "observations":
		return true
	}
	return false
}

func (s *scanner) string() (string, error) {
	v, err := s.str()
	return string(v), err
}

func (s *scanner) time() (time.Time, error) {
	v, err := s.str()
	if err != nil {
		return time.Time{}, err
	}
	return parseTime(v)
}

// buckets parses [{"le":x,"count":y},…].
func (s *scanner) buckets() ([]jsonBucket, error) {
	out := make([]jsonBucket, 0, 24)
	err := s.array(func() error {
		var bk jsonBucket
		err := s.object(func(key []byte) error {
			f, err := s.float()
			if err != nil {
				return err
			}
			switch string(key) {
			case "le":
				bk.UpperBound = jsonLE(f)
			case "count":
				bk.Count = jsonFloat(f)
			default:
				return errSlow
			}
			return nil
		})
		out = append(out, bk)
		return err
	})
	return out, err
}

// probe parses a telemetry.ProbeRecord (one per probe, with every
// inter-token gap: encoding/json spends ~30 µs on one).
func (s *scanner) probe(p *telemetry.ProbeRecord) error {
	return s.object(func(key []byte) error {
		k := string(key)
		if s.null() {
			if k == "itl_ms" || k == "tokens_per_event" {
				return errSlow
			}
			return nil
		}
		var err error
		switch k {
		case "ok":
			p.OK, err = s.bool()
		case "error_kind":
			p.ErrorKind, err = s.string()
		case "error":
			p.Error, err = s.string()
		case "status":
			var n int64
			n, err = s.int()
			p.Status = int(n)
		case "ttft_ms":
			p.TTFTms, err = s.float()
		case "tpot_ms":
			p.TPOTms, err = s.float()
		case "e2el_ms":
			p.E2Ems, err = s.float()
		case "output_tokens":
			var n int64
			n, err = s.int()
			p.OutputTokens = int(n)
		case "output_tokens_source":
			p.TokensSource, err = s.string()
		case "itl_ms":
			p.ITLms = append([]float64{}, p.ITLms[:0]...) // [] is empty, not nil, as in encoding/json
			err = s.array(func() error {
				f, err := s.float()
				p.ITLms = append(p.ITLms, f)
				return err
			})
		case "tokens_per_event":
			p.TokensPerEvent = append([]int{}, p.TokensPerEvent[:0]...)
			err = s.array(func() error {
				n, err := s.int()
				p.TokensPerEvent = append(p.TokensPerEvent, int(n))
				return err
			})
		default:
			return errSlow
		}
		return err
	})
}

// status parses a telemetry.SourceStatus (one per probe and scrape).
func (s *scanner) status(st *telemetry.SourceStatus) error {
	return s.object(func(key []byte) error {
		k := string(key)
		if s.null() {
			if k == "warnings" || k == "recognised" {
				return errSlow
			}
			return nil
		}
		var err error
		switch k {
		case "name":
			st.Name, err = s.string()
		case "kind":
			var kind string
			kind, err = s.string()
			st.Kind = telemetry.SourceKind(kind)
		case "url":
			st.URL, err = s.string()
		case "state":
			var v []byte
			if v, err = s.str(); err == nil {
				err = st.State.UnmarshalText(v)
			}
		case "error":
			st.Err, err = s.string()
		case "last_ok":
			st.LastOK, err = s.time()
		case "consecutive_failures":
			var n int64
			n, err = s.int()
			st.Failures = int(n)
		case "latency_ms":
			var ms float64
			ms, err = s.float()
			st.Latency = time.Duration(ms * float64(time.Millisecond))
		case "description":
			st.Description, err = s.string()
		case "warnings", "recognised":
			var list []string
			err = s.array(func() error {
				v, err := s.string()
				list = append(list, v)
				return err
			})
			if list == nil {
				list = []string{} // encoding/json gives an empty, non-nil slice
			}
			if k == "warnings" {
				st.Warnings = list
			} else {
				st.Recognised = list
			}
		default:
			return errSlow
		}
		return err
	})
}

// parseTime reads UTC times as the writer produces them
// ("2006-01-02T15:04:05.999999999Z") by hand: time.Parse costs more than
// the rest of a sample line. Other forms go to encoding/json's strict
// parser.
func parseTime(v []byte) (time.Time, error) {
	if len(v) < 20 || v[len(v)-1] != 'Z' || v[4] != '-' || v[7] != '-' || v[10] != 'T' || v[13] != ':' || v[16] != ':' {
		return time.Time{}, errSlow
	}
	ok := true
	num := func(b []byte) int {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				ok = false
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, mo, d := num(v[0:4]), num(v[5:7]), num(v[8:10])
	h, mi, sec := num(v[11:13]), num(v[14:16]), num(v[17:19])
	ns, frac := 0, v[19:len(v)-1]
	if len(frac) > 0 {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
			return time.Time{}, errSlow
		}
		ns = num(frac[1:])
		for k := len(frac) - 1; k < 9; k++ {
			ns *= 10
		}
	}
	if !ok || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, errSlow
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC)
	if t.Day() != d { // 31 February is not normalised into March
		return time.Time{}, errSlow
	}
	return t, nil
}

// interner shares the strings a recording repeats on every line (endpoint,
// source, signal, kind), saving an allocation per field. Bounded, so a
// recording with endless distinct names cannot grow it without limit.
type interner struct{ m map[string]string }

const maxInterned = 1 << 14

func (in *interner) get(b []byte) string {
	if s, ok := in.m[string(b)]; ok { // no allocation for the lookup
		return s
	}
	s := string(b)
	if in.m == nil {
		in.m = map[string]string{}
	}
	if len(in.m) < maxInterned {
		in.m[s] = s
	}
	return s
}
