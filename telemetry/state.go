package telemetry

import "fmt"

// State tells how far a value can be trusted. The zero value is Unknown:
// a value nobody has observed is never mistaken for a live zero.
type State uint8

const (
	Unknown State = iota // never observed since start
	Live                 // fresh: observed within its expected interval
	Stale                // last value is older than allowed
	NoData               // the source answered, but with nothing (empty, NaN, 0/0)
	Error                // the probe, scrape or query failed
)

var stateNames = [...]string{"unknown", "live", "stale", "no_data", "error"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", s)
}

// MarshalText writes the JSON/YAML name of the state.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a state name written by MarshalText.
func (s *State) UnmarshalText(b []byte) error {
	for i, n := range stateNames {
		if n == string(b) {
			*s = State(i)
			return nil
		}
	}
	return fmt.Errorf("unknown state %q", b)
}
