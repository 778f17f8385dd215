package httpclient

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
)

const redacted = "<secret>"

// Secret is a credential. Every way of printing it (fmt verbs, JSON, text,
// YAML, slog) yields "<secret>"; Reveal returns the value for the one place
// that sends it.
type Secret string

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }

func (Secret) String() string   { return redacted }
func (Secret) GoString() string { return redacted }

// Format prints "<secret>" for every verb.
func (Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// MarshalJSON writes "<secret>".
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText writes "<secret>".
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// MarshalYAML writes "<secret>".
func (Secret) MarshalYAML() (any, error) { return redacted, nil }

// LogValue writes "<secret>" in structured logs.
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// UnmarshalText reads a secret from a config file.
func (s *Secret) UnmarshalText(b []byte) error {
	*s = Secret(b)
	return nil
}

// SecretSource says where a secret comes from: an environment variable, a
// file (re-read on every Fetch, so rotated mounted secrets work), or an
// inline value from a config file. Never from command-line flags (visible
// in ps).
type SecretSource struct {
	Env   string `json:"env,omitempty" yaml:"env,omitempty"`
	File  string `json:"file,omitempty" yaml:"file,omitempty"`
	Value Secret `json:"value,omitempty" yaml:"value,omitempty"`
}

// IsZero reports whether no source is set.
func (s SecretSource) IsZero() bool { return s.Env == "" && s.File == "" && s.Value == "" }

// Fetch reads the secret now: the file (trimmed of surrounding space),
// else the environment variable, else the inline value. Errors name the
// file or variable, never the value.
func (s SecretSource) Fetch() (Secret, error) { return s.FetchAs("secret") }

// FetchAs is Fetch with errors that call the secret what ("API key").
func (s SecretSource) FetchAs(what string) (Secret, error) {
	switch {
	case s.File != "":
		b, err := os.ReadFile(s.File)
		if err != nil {
			return "", fmt.Errorf("reading %s file: %w", what, err)
		}
		return Secret(strings.TrimSpace(string(b))), nil
	case s.Env != "":
		v, ok := os.LookupEnv(s.Env)
		if !ok {
			return "", fmt.Errorf("%s environment variable %s is not set", what, s.Env)
		}
		return Secret(strings.TrimSpace(v)), nil
	}
	return s.Value, nil
}

// Scrub replaces every secret value in text by "<secret>", for text that
// came back from the network (error bodies echo request headers). Values
// under 4 bytes are left alone: they would garble every message.
func Scrub(text string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= 4 && strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, redacted)
		}
	}
	return text
}
