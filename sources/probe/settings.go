package probe

import (
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
	if s.Interval == 0 {
		s.Interval = def.Interval
	}
	if s.Concurrency == 0 {
		s.Concurrency = def.Concurrency
	}
	if s.MaxTokens == 0 {
		s.MaxTokens = def.MaxTokens
	}
	if s.Prompt == "" && s.PromptFile == "" {
		s.Prompt, s.PromptFile = def.Prompt, def.PromptFile
	}
	if s.Timeout == 0 {
		s.Timeout = def.Timeout
	}
	if s.StallTimeout == 0 {
		s.StallTimeout = def.StallTimeout
	}
	if s.Seed == 0 {
		s.Seed = def.Seed
	}
	if s.BearerTokenEnv == "" && s.BearerTokenFile == "" {
		s.BearerTokenEnv, s.BearerTokenFile = def.BearerTokenEnv, def.BearerTokenFile
	}
	if s.Headers == nil {
		s.Headers = def.Headers
	}
	if s.CAFile == "" {
		s.CAFile = def.CAFile
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
