package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// EventKind names what a scenario event does to a model.
type EventKind string

// Scenario event kinds.
const (
	// EventPrefillSlow multiplies prefill compute time by Factor (e.g. 5).
	EventPrefillSlow EventKind = "prefill_slow"
	// EventBandwidth multiplies the bandwidth efficiency by Factor
	// (0.25 = ÷4): decode steps take longer and DRAM-active drops, as with
	// a throttled or contended GPU.
	EventBandwidth EventKind = "bandwidth"
	// EventOutage makes the model answer 503 and fails in-flight requests.
	EventOutage EventKind = "outage"
	// EventBurst adds Streams background load streams.
	EventBurst EventKind = "burst"
	// EventKVPressure leaves only Factor (0 < f < 1) of the KV pool to
	// requests, as if something else held the rest: the cache reads near
	// full, admissions stall and running sequences are preempted.
	EventKVPressure EventKind = "kv_pressure"
	// EventNetworkDelay holds every API request for Delay before the
	// engine sees it, as a slow network path or gateway would: the
	// client's TTFT grows, the engine's own figures do not.
	EventNetworkDelay EventKind = "network_delay"
	// EventPrefixMiss makes every prefix-cache lookup miss, as a changed
	// system prompt or prefix-blind routing does: prefills grow.
	EventPrefixMiss EventKind = "prefix_miss"
	// EventSpecAccept multiplies the speculative-decoding acceptance rate
	// by Factor (0 ≤ f < 1), as a draft model that no longer predicts the
	// traffic: fewer tokens per step.
	EventSpecAccept EventKind = "spec_accept"
	// EventKVSlow multiplies the time of every KV transfer from a prefill
	// to a decode worker by Factor (>= 1), as a congested or degraded
	// RDMA link would (a disaggregated model, PD).
	EventKVSlow EventKind = "kv_transfer_slow"
)

// Event is one entry of a scenario timeline. Offsets are measured from
// server creation (New).
//
// YAML schema (unknown keys are rejected; durations are Go strings like
// "30s", "1m30s"):
//
//	events:
//	  - at: 30s          # required offset
//	    kind: bandwidth  # prefill_slow | bandwidth | outage | burst | kv_pressure | network_delay | prefix_miss | spec_accept | kv_transfer_slow
//	    model: NAME      # optional; empty = every model
//	    factor: 0.25     # prefill_slow and kv_transfer_slow (>= 1), bandwidth (0 < f <= 1), kv_pressure (0 < f < 1), spec_accept (0 <= f < 1)
//	    streams: 20      # burst: extra load streams (> 0)
//	    delay: 300ms     # network_delay: added before the engine sees a request (> 0)
//	    for: 45s         # duration; empty/0 = until the end (required with every)
//	    every: 2m        # optional: repeat with this period (> for)
//	    rank: 1          # optional: only this data-parallel rank of the model
type Event struct {
	At      time.Duration `yaml:"at"`
	Kind    EventKind     `yaml:"kind"`
	Model   string        `yaml:"model,omitempty"`
	Factor  float64       `yaml:"factor,omitempty"`
	Streams int           `yaml:"streams,omitempty"`
	Delay   time.Duration `yaml:"delay,omitempty"`
	For     time.Duration `yaml:"for,omitempty"`
	Every   time.Duration `yaml:"every,omitempty"`
	// Rank, when set, limits the event to that data-parallel rank of the
	// model (ModelSpec.DPRanks); nil = every rank.
	Rank *int `yaml:"rank,omitempty"`
}

// Scenario is a timeline of events applied to the served models.
type Scenario struct {
	Events []Event `yaml:"events"`
}

// ParseScenario decodes a YAML scenario, rejecting unknown keys, and
// validates it (model names are checked later by New).
func ParseScenario(r io.Reader) (Scenario, error) {
	var sc Scenario
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(&sc); err != nil && !errors.Is(err, io.EOF) {
		return Scenario{}, fmt.Errorf("scenario: %w", err)
	}
	return sc, sc.validate(nil)
}

// LoadScenario reads and parses a scenario YAML file.
func LoadScenario(path string) (Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Scenario{}, err
	}
	sc, err := ParseScenario(bytes.NewReader(b))
	if err != nil {
		return Scenario{}, fmt.Errorf("%s: %w", path, err)
	}
	return sc, nil
}

// ParseEvent parses the compact command-line form
// KIND@AT[,key=value...], e.g. "bandwidth@30s,factor=0.25,for=45s,model=m"
// or "burst@10s,streams=40,for=20s,every=1m". Keys are those of the YAML.
func ParseEvent(s string) (Event, error) {
	parts := strings.Split(s, ",")
	kind, at, ok := strings.Cut(parts[0], "@")
	if !ok {
		return Event{}, fmt.Errorf("event %q: want KIND@AT[,key=value...]", s)
	}
	ev := Event{Kind: EventKind(strings.TrimSpace(kind))}
	var err error
	if ev.At, err = time.ParseDuration(strings.TrimSpace(at)); err != nil {
		return Event{}, fmt.Errorf("event %q: at: %w", s, err)
	}
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return Event{}, fmt.Errorf("event %q: %q is not key=value", s, kv)
		}
		switch strings.TrimSpace(k) {
		case "model":
			ev.Model = v
		case "factor":
			ev.Factor, err = strconv.ParseFloat(v, 64)
		case "streams":
			ev.Streams, err = strconv.Atoi(v)
		case "for":
			ev.For, err = time.ParseDuration(v)
		case "delay":
			ev.Delay, err = time.ParseDuration(v)
		case "every":
			ev.Every, err = time.ParseDuration(v)
		case "rank":
			var r int
			r, err = strconv.Atoi(v)
			ev.Rank = &r
		default:
			err = fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return Event{}, fmt.Errorf("event %q: %w", s, err)
		}
	}
	return ev, Scenario{Events: []Event{ev}}.validate(nil)
}

// validate checks each event; models, when non-nil, are the served names.
func (sc Scenario) validate(models []string) error {
	for i, ev := range sc.Events {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("scenario event %d (%s at %s): %s", i+1, ev.Kind, ev.At, fmt.Sprintf(format, a...))
		}
		if ev.At < 0 || ev.For < 0 || ev.Every < 0 || ev.Delay < 0 {
			return bad("negative duration")
		}
		switch ev.Kind {
		case EventPrefillSlow, EventKVSlow:
			if ev.Factor < 1 {
				return bad("factor must be >= 1 (it takes factor× longer)")
			}
		case EventBandwidth:
			if ev.Factor <= 0 || ev.Factor > 1 {
				return bad("factor must be in (0,1] (multiplies bandwidth efficiency)")
			}
		case EventOutage, EventPrefixMiss:
		case EventBurst:
			if ev.Streams <= 0 {
				return bad("streams must be > 0")
			}
		case EventKVPressure:
			if ev.Factor <= 0 || ev.Factor >= 1 {
				return bad("factor must be in (0,1) (the share of the KV pool left to requests)")
			}
		case EventNetworkDelay:
			if ev.Delay <= 0 {
				return bad("delay must be > 0")
			}
		case EventSpecAccept:
			if ev.Factor < 0 || ev.Factor >= 1 {
				return bad("factor must be in [0,1) (multiplies the acceptance rate)")
			}
		default:
			return bad("unknown kind (want prefill_slow, bandwidth, outage, burst, kv_pressure, network_delay, prefix_miss, spec_accept or kv_transfer_slow)")
		}
		if ev.Rank != nil && *ev.Rank < 0 {
			return bad("rank must be >= 0")
		}
		if ev.Every > 0 && (ev.For == 0 || ev.For >= ev.Every) {
			return bad("every needs 0 < for < every")
		}
		if models != nil && ev.Model != "" && !contains(models, ev.Model) {
			return bad("unknown model %q", ev.Model)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// effects is the combined state of all events active for one model.
type effects struct {
	bwFactor      float64 // multiplies Efficiency
	prefillFactor float64 // multiplies prefill time
	outage        bool
	outageLeft    time.Duration
	burst         int
	kvFactor      float64       // share of the KV pool left to requests
	netDelay      time.Duration // held before the engine sees a request
	prefixMiss    bool          // prefix-cache lookups miss
	acceptFactor  float64       // multiplies the speculative acceptance rate
	kvSlow        float64       // multiplies KV transfer time
}

// noEffects is the state of a model no event touches.
func noEffects() effects {
	return effects{bwFactor: 1, prefillFactor: 1, kvFactor: 1, acceptFactor: 1, kvSlow: 1}
}

// active reports whether ev covers offset t, and how long it still lasts
// (-1 = until the end).
func (ev Event) active(t time.Duration) (bool, time.Duration) {
	if t < ev.At {
		return false, 0
	}
	start := ev.At
	if ev.Every > 0 {
		start += (t - ev.At) / ev.Every * ev.Every
	}
	if ev.For == 0 {
		return true, -1
	}
	end := start + ev.For
	return t < end, end - t
}

// effectsAt folds the events for model's rank at offset t (rank -1: the
// events for all its ranks only). Overlapping factors multiply, bursts
// add.
func (sc Scenario) effectsAt(model string, rank int, t time.Duration) effects {
	fx := noEffects()
	for _, ev := range sc.Events {
		if ev.Model != "" && ev.Model != model || ev.Rank != nil && *ev.Rank != rank {
			continue
		}
		on, left := ev.active(t)
		if !on {
			continue
		}
		switch ev.Kind {
		case EventPrefillSlow:
			fx.prefillFactor *= ev.Factor
		case EventBandwidth:
			fx.bwFactor *= ev.Factor
		case EventOutage:
			fx.outage = true
			if left < 0 {
				left = time.Hour
			}
			fx.outageLeft = max(fx.outageLeft, left)
		case EventBurst:
			fx.burst += ev.Streams
		case EventKVPressure:
			fx.kvFactor *= ev.Factor
		case EventNetworkDelay:
			fx.netDelay += ev.Delay
		case EventPrefixMiss:
			fx.prefixMiss = true
		case EventSpecAccept:
			fx.acceptFactor *= ev.Factor
		case EventKVSlow:
			fx.kvSlow *= ev.Factor
		}
	}
	return fx
}
