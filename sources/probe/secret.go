package probe

import (
	"errors"
	"strings"

	"github.com/ttftop/ttftop/sources/httpclient"
)

// Secret is httpclient.Secret: a credential that prints as "<secret>"
// everywhere; only Reveal returns the value, and only the request builder
// calls it.
type Secret = httpclient.Secret

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

// token returns the current key, or "" when none is configured: the file,
// else the environment variable, else Token.
func (a Auth) token() (Secret, error) {
	return httpclient.SecretSource{Env: a.TokenEnv, File: a.TokenFile, Value: a.Token}.FetchAs("API key")
}

// scrubber removes credential values from text that came back from the
// network (error bodies echo headers, some servers echo requests).
type scrubber []string

func (s scrubber) scrub(text string) string { return httpclient.Scrub(text, s) }
