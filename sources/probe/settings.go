package probe

import (
	"cmp"
	"fmt"
	"os"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/httpclient"
)

// Settings are a probe's settings as a config file writes them (its
// probe: block, at the top and per endpoint) and the monitoring flags set
// them; Apply puts them into Options, whose defaults they share.
type Settings struct {
	Disabled     bool         `yaml:"disabled"`
	Interval     slo.Duration `yaml:"interval"`
	Concurrency  int          `yaml:"concurrency"`
	MaxTokens    int          `yaml:"max_tokens"`
	Prompt       string       `yaml:"prompt"` // short, medium, long or literal text
	PromptFile   string       `yaml:"prompt_file"`
	Timeout      slo.Duration `yaml:"timeout"`
	StallTimeout slo.Duration `yaml:"stall_timeout"`
	Seed         int64        `yaml:"seed"`
	// NoUsage sends no stream_options (servers that reject it).
	NoUsage bool `yaml:"no_usage"`
	// ContinuousUsage asks vLLM for usage on every chunk, the exact
	// tokens of each event (speculative decoding sends several).
	ContinuousUsage bool `yaml:"continuous_usage"`
	httpclient.Auth `yaml:",inline"`
}

// DefaultSettings are the settings of a probe nobody configured.
func DefaultSettings() Settings {
	return Settings{Interval: slo.Duration(DefaultInterval), Concurrency: DefaultConcurrency, MaxTokens: DefaultMaxTokens,
		Prompt: DefaultPrompt, Timeout: slo.Duration(DefaultTimeout), StallTimeout: slo.Duration(DefaultStallTimeout)}
}

// Fill sets s's unset fields from def: an endpoint's probe block from
// the file's top one, that from DefaultSettings.
func (s *Settings) Fill(def Settings) {
	s.Interval, s.Concurrency, s.MaxTokens = cmp.Or(s.Interval, def.Interval), cmp.Or(s.Concurrency, def.Concurrency), cmp.Or(s.MaxTokens, def.MaxTokens)
	s.Timeout, s.StallTimeout, s.Seed = cmp.Or(s.Timeout, def.Timeout), cmp.Or(s.StallTimeout, def.StallTimeout), cmp.Or(s.Seed, def.Seed)
	s.CAFile = cmp.Or(s.CAFile, def.CAFile)
	// A prompt, a token and the headers come whole: a file does not mix
	// with an inherited name, nor an env var with an inherited file.
	if s.Prompt == "" && s.PromptFile == "" {
		s.Prompt, s.PromptFile = def.Prompt, def.PromptFile
	}
	if s.BearerTokenEnv == "" && s.BearerTokenFile == "" {
		s.BearerTokenEnv, s.BearerTokenFile = def.BearerTokenEnv, def.BearerTokenFile
	}
	if s.Headers == nil {
		s.Headers = def.Headers
	}
	s.Insecure = s.Insecure || def.Insecure
	s.NoUsage = s.NoUsage || def.NoUsage
	s.ContinuousUsage = s.ContinuousUsage || def.ContinuousUsage
}

// Apply sets o's schedule, request, prompt and credentials from s (the
// prompt file is read now).
func (s Settings) Apply(o *Options) error {
	o.MaxTokens, o.Timeout, o.StallTimeout = s.MaxTokens, s.Timeout.D(), s.StallTimeout.D()
	o.Interval, o.Concurrency = s.Interval.D(), s.Concurrency
	o.NoUsage, o.ContinuousUsage = s.NoUsage, s.ContinuousUsage
	o.Auth = Auth{TokenEnv: s.BearerTokenEnv, TokenFile: s.BearerTokenFile, CAFile: s.CAFile, Insecure: s.Insecure}
	if s.Seed != 0 {
		seed := s.Seed
		o.Seed = &seed
	}
	prompt, err := s.prompt()
	if err != nil {
		return err
	}
	o.Prompt = prompt
	for k, v := range s.Headers {
		o.Headers = append(o.Headers, Header{Name: k, Value: Secret(v)})
	}
	return nil
}

// prompt resolves the prompt setting: a file, a built-in name (short,
// medium, long) or literal text.
func (s Settings) prompt() (string, error) {
	if s.PromptFile != "" {
		b, err := os.ReadFile(s.PromptFile)
		if err != nil {
			return "", fmt.Errorf("prompt file: %w", err)
		}
		return string(b), nil
	}
	if p, ok := BuiltinPrompts()[s.Prompt]; ok {
		return p, nil
	}
	return s.Prompt, nil
}
