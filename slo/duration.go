package slo

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration as a config file writes it: "500ms", "5m",
// "28d" or "2w" (ParseDuration, the --slo-* flags' parser, so a value
// means the same in a file and on the command line; negative durations
// are refused). The sources' settings types hold their durations in it.
type Duration time.Duration

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalYAML decodes a duration string. A value it cannot read is a
// yaml.TypeError at its line, which lets the decoder go on, so every such
// mistake of a file is said at once.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseDuration(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }
