package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/ttftop/ttftop/slo"
)

// The value types below read their YAML with slo's parsers, the same ones
// the --slo-* flags use, so a value means the same in a file and on the
// command line.

// Ratio is a share written as "99%" or a fraction below 1 ("0.99"); a bare
// 1 or more is refused as ambiguous (slo.ParseRatio).
type Ratio float64

// UnmarshalYAML decodes a ratio.
func (r *Ratio) UnmarshalYAML(n *yaml.Node) error {
	v, err := slo.ParseRatio(n.Value)
	if err != nil {
		return valueError(n, err)
	}
	*r = Ratio(v)
	return nil
}

// Percentile is a quantile written as 95, "p99", "99.9" or 0.95
// (slo.ParsePercentile); it holds the fraction, 0.95.
type Percentile float64

// UnmarshalYAML decodes a percentile.
func (p *Percentile) UnmarshalYAML(n *yaml.Node) error {
	v, err := slo.ParsePercentile(n.Value)
	if err != nil {
		return valueError(n, err)
	}
	*p = Percentile(v)
	return nil
}

// valueError is a value that could not be read, at its line. As a
// yaml.TypeError it lets the decoder go on, so every such mistake of a
// file is said at once.
func valueError(n *yaml.Node, err error) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
}
