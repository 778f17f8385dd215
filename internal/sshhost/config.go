package sshhost

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Target is an ssh:// argument: [user@]host[:port], host possibly an
// alias of ~/.ssh/config.
type Target struct {
	User  string
	Alias string
	Port  int // 0: from the config, else 22
}

// ParseTarget reads "ssh://[user@]host[:port]".
func ParseTarget(s string) (Target, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "ssh" || u.Hostname() == "" {
		return Target{}, fmt.Errorf("%q: want ssh://[user@]host[:port]", s)
	}
	if u.Path != "" && u.Path != "/" {
		return Target{}, fmt.Errorf("%q: an ssh target has no path", s)
	}
	t := Target{User: u.User.Username(), Alias: u.Hostname()}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Target{}, fmt.Errorf("%q: port %q", s, p)
		}
		t.Port = n
	}
	return t, nil
}

// String is the target as given, without a default port.
func (t Target) String() string {
	s := t.Alias
	if t.User != "" {
		s = t.User + "@" + s
	}
	if t.Port != 0 {
		s += ":" + strconv.Itoa(t.Port)
	}
	return "ssh://" + s
}

// Settings are what ssh would use to connect to a target.
type Settings struct {
	HostName      string
	User          string
	Port          int
	IdentityFiles []string
	KnownHosts    []string
}

// Addr is host:port to dial.
func (s Settings) Addr() string { return joinHostPort(s.HostName, s.Port) }

// Resolve applies ~/.ssh/config (under home) to t as ssh does: the first
// value obtained for each keyword wins, the command line's before any;
// IdentityFile accumulates. Only HostName, User, Port, IdentityFile and
// UserKnownHostsFile are read; Match blocks and Include are not.
func Resolve(t Target, home string) (Settings, error) {
	s := Settings{User: t.User, Port: t.Port}
	f, err := os.Open(filepath.Join(home, ".ssh", "config"))
	switch {
	case os.IsNotExist(err):
	case err != nil:
		return s, err
	default:
		defer f.Close()
		if err := s.read(f, t.Alias, home); err != nil {
			return s, err
		}
	}
	if s.HostName == "" {
		s.HostName = t.Alias
	}
	if s.User == "" {
		s.User = os.Getenv("USER")
	}
	if s.Port == 0 {
		s.Port = 22
	}
	if len(s.IdentityFiles) == 0 {
		for _, n := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
			s.IdentityFiles = append(s.IdentityFiles, filepath.Join(home, ".ssh", n))
		}
	}
	if len(s.KnownHosts) == 0 {
		s.KnownHosts = []string{filepath.Join(home, ".ssh", "known_hosts")}
	}
	return s, nil
}

func (s *Settings) read(f *os.File, alias, home string) error {
	sc := bufio.NewScanner(f)
	applies, line := true, 0 // lines before any Host block apply to all
	for sc.Scan() {
		line++
		key, val := splitKeyword(sc.Text())
		if key == "" {
			continue
		}
		switch key {
		case "host":
			applies = hostMatches(strings.Fields(val), alias)
			continue
		case "match":
			applies = false // not supported: its lines are skipped
			continue
		}
		if !applies {
			continue
		}
		switch key {
		case "hostname":
			if s.HostName == "" {
				s.HostName = strings.ReplaceAll(val, "%h", alias)
			}
		case "user":
			if s.User == "" {
				s.User = val
			}
		case "port":
			if s.Port == 0 {
				n, err := strconv.Atoi(val)
				if err != nil {
					return fmt.Errorf("~/.ssh/config line %d: Port %q", line, val)
				}
				s.Port = n
			}
		case "identityfile":
			s.IdentityFiles = append(s.IdentityFiles, expandHome(val, home))
		case "userknownhostsfile":
			if len(s.KnownHosts) == 0 {
				for _, p := range strings.Fields(val) {
					s.KnownHosts = append(s.KnownHosts, expandHome(p, home))
				}
			}
		}
	}
	return sc.Err()
}

// splitKeyword reads "Keyword value" or "Keyword=value", lower-casing the
// keyword and unquoting the value; "" for blank lines and comments.
func splitKeyword(line string) (string, string) {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return "", ""
	}
	i := strings.IndexAny(line, " \t=")
	if i < 0 {
		return strings.ToLower(line), ""
	}
	val := strings.TrimLeft(line[i:], " \t=")
	return strings.ToLower(line[:i]), strings.Trim(val, `"`)
}

// hostMatches applies a Host line's patterns: any positive match and no
// negated one.
func hostMatches(patterns []string, alias string) bool {
	matched := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		ok, err := filepath.Match(strings.TrimPrefix(p, "!"), alias)
		if err != nil || !ok {
			continue
		}
		if neg {
			return false
		}
		matched = true
	}
	return matched
}

func expandHome(p, home string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[1:])
	}
	return p
}

func joinHostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + strconv.Itoa(port)
	}
	return host + ":" + strconv.Itoa(port)
}
