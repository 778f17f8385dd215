package httpclient

// Auth is how a config file gives a source's credentials and TLS trust:
// by reference only (an environment variable or a file, re-read per
// request), never the secret itself. Each source's settings embed it,
// inline, so its keys sit beside the source's own.
type Auth struct {
	BearerTokenEnv  string `yaml:"bearer_token_env"`
	BearerTokenFile string `yaml:"bearer_token_file"`
	// Username and the password are basic auth, which only PromQL
	// sources send (the config refuses them elsewhere).
	Username     string            `yaml:"username"`
	PasswordEnv  string            `yaml:"password_env"`
	PasswordFile string            `yaml:"password_file"`
	Headers      map[string]string `yaml:"headers"`
	CAFile       string            `yaml:"ca_file"`
	Insecure     bool              `yaml:"insecure"`
}

// Config is the client configuration a's bearer token, headers and TLS
// trust make (basic auth is the PromQL source's own).
func (a Auth) Config() Config {
	c := Config{CAFile: a.CAFile, InsecureSkipVerify: a.Insecure,
		BearerToken: SecretSource{Env: a.BearerTokenEnv, File: a.BearerTokenFile}}
	if len(a.Headers) > 0 {
		c.Headers = map[string]SecretSource{}
		for k, v := range a.Headers {
			c.Headers[k] = SecretSource{Value: Secret(v)}
		}
	}
	return c
}

// HasBasicAuth reports whether a username or password is set.
func (a Auth) HasBasicAuth() bool {
	return a.Username != "" || a.PasswordEnv != "" || a.PasswordFile != ""
}
