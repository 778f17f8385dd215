package probe

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// Secret holds a credential. Every way of printing or encoding it yields
// "<secret>"; only Reveal returns the value, and only the request builder
// calls it.
type Secret string

const redacted = "<secret>"

// String hides the value.
func (Secret) String() string { return redacted }

// GoString hides the value from %#v.
func (Secret) GoString() string { return redacted }

// Format hides the value from every fmt verb (%s %v %q %x %d …).
func (Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// MarshalJSON hides the value from encoding/json.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText hides the value from text encoders (YAML, map keys).
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue hides the value from log/slog.
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// Reveal returns the credential itself.
func (s Secret) Reveal() string { return string(s) }

// Header is a custom request header. Its value is a Secret because custom
// headers often carry credentials (X-Api-Key, cookies).
type Header struct {
	Name  string `json:"name"`
	Value Secret `json:"value"`
}

// ParseHeader reads "Name: value" (the form of --header).
func ParseHeader(s string) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
		// The value is not echoed: it may be a credential.
		return Header{}, errors.New(`header must look like "Name: value"`)
	}
	return Header{Name: name, Value: Secret(strings.TrimSpace(value))}, nil
}

// Auth says where the API key comes from and how TLS is verified. Keys are
// never taken from the command line (visible in ps): only from an
// environment variable, a file re-read on every request (so a rotated
// mounted secret works, as prometheus/common FileSecret does), or a Secret
// set by a library caller.
type Auth struct {
	TokenEnv  string `json:"token_env,omitempty"`
	TokenFile string `json:"token_file,omitempty"`
	Token     Secret `json:"token,omitempty"`
	// CAFile adds a PEM CA bundle to the system roots.
	CAFile string `json:"ca_file,omitempty"`
	// ServerName overrides the name checked in the server certificate.
	ServerName string `json:"server_name,omitempty"`
	// Insecure turns certificate verification off. It is reported loudly:
	// a warning on the CLI, "TLS NOT VERIFIED" in the source status.
	Insecure bool `json:"insecure_skip_verify,omitempty"`
}

// token returns the current key, or "" when none is configured.
func (a Auth) token() (Secret, error) {
	switch {
	case a.TokenFile != "":
		b, err := os.ReadFile(a.TokenFile)
		if err != nil {
			return "", fmt.Errorf("reading API key file: %w", err)
		}
		return Secret(strings.TrimSpace(string(b))), nil
	case a.TokenEnv != "":
		v, ok := os.LookupEnv(a.TokenEnv)
		if !ok {
			return "", fmt.Errorf("API key environment variable %s is not set", a.TokenEnv)
		}
		return Secret(strings.TrimSpace(v)), nil
	default:
		return a.Token, nil
	}
}

// scrubber removes credential values from text that came back from the
// network (error bodies echo headers, some servers echo requests).
type scrubber []string

func (s scrubber) scrub(text string) string {
	for _, v := range s {
		if len(v) >= 4 && strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, redacted)
		}
	}
	return text
}
