package promtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// pollEvery is how often the wait helpers ask.
const pollEvery = 200 * time.Millisecond

// waitReady polls /-/ready until it answers 200, the process exits or the
// timeout passes.
func (s *Server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("%s exited (%v): %s", s.name, s.waitErr, s.Log())
		default:
		}
		resp, err := s.client.Get(s.URL + "/-/ready")
		if err == nil {
			_, cerr := io.Copy(io.Discard, resp.Body)
			err = errors.Join(cerr, resp.Body.Close())
			if err == nil && resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s (last error %v); log:\n%s", timeout, err, s.Log())
		}
		time.Sleep(pollEvery)
	}
}

// checkOwn makes sure the server answering is the one started: a free
// port taken by another package's server between probing and binding
// leaves this one exiting while the other answers /-/ready.
func (s *Server) checkOwn() error {
	path := "/api/v1/status/flags" // Prometheus: JSON with storage.tsdb.path
	if s.name == "victoria-metrics" {
		path = "/flags" // text, -storageDataPath="…"
	}
	resp, err := s.client.Get(s.URL + path)
	if err != nil {
		return fmt.Errorf("%s flags: %w", s.name, err)
	}
	body, err := io.ReadAll(resp.Body)
	if err = errors.Join(err, resp.Body.Close()); err != nil {
		return fmt.Errorf("%s flags: %w", s.name, err)
	}
	own, err := flagsNameData(s.name, body, s.data)
	if err != nil {
		return fmt.Errorf("%s flags: %w", s.name, err)
	}
	if !own {
		return fmt.Errorf("another server answers on %s (its flags do not name %s)", s.URL, s.data)
	}
	return nil
}

// flagsNameData reports whether a server's flags page names data as its
// data directory. Prometheus' is JSON, which escapes characters a test's
// temporary directory may hold (& as \u0026), so its path is decoded and
// compared whole; VictoriaMetrics' is plain text, -storageDataPath="…".
func flagsNameData(name string, body []byte, data string) (bool, error) {
	if name == "victoria-metrics" {
		return strings.Contains(string(body), data), nil
	}
	var flags struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(body, &flags); err != nil {
		return false, err
	}
	return flags.Data["storage.tsdb.path"] == data, nil
}

// WaitTargetsUp waits until every target has been scraped successfully.
func (s *Server) WaitTargetsUp(t testing.TB, timeout time.Duration) {
	t.Helper()
	s.waitFor(t, timeout, "all targets up", func() (bool, error) {
		var body struct {
			Data struct {
				ActiveTargets []struct {
					Health    string `json:"health"`
					LastError string `json:"lastError"`
				} `json:"activeTargets"`
			} `json:"data"`
		}
		if err := s.get("/api/v1/targets", &body); err != nil {
			return false, err
		}
		ts := body.Data.ActiveTargets
		for _, tg := range ts {
			if tg.Health != "up" {
				return false, fmt.Errorf("target %s: %s", tg.Health, tg.LastError)
			}
		}
		return len(ts) > 0, nil
	})
}

// WaitForSeries waits until an instant query returns at least n series.
func (s *Server) WaitForSeries(t testing.TB, query string, n int, timeout time.Duration) {
	t.Helper()
	s.waitFor(t, timeout, fmt.Sprintf("%d series for %s", n, query), func() (bool, error) {
		var body struct {
			Data struct {
				Result []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		if err := s.get("/api/v1/query?query="+url.QueryEscape(query), &body); err != nil {
			return false, err
		}
		return len(body.Data.Result) >= n, nil
	})
}

// WaitHolds waits until every series series selects has a raw sample at
// or after at in the store's answer now: the store then holds every sample
// up to at (a target's scrapes land in order), so instant queries at or
// before at answer the same from then on, not before a sample that was
// still landing when they were asked. (Raw samples, not timestamp():
// VictoriaMetrics' timestamp() dates its own evaluation step.)
func (s *Server) WaitHolds(t testing.TB, series string, at time.Time, timeout time.Duration) {
	t.Helper()
	s.waitFor(t, timeout, fmt.Sprintf("samples of %s up to %s", series, at.Format("15:04:05.000")), func() (bool, error) {
		var body struct {
			Data struct {
				Result []struct {
					Values [][2]any `json:"values"`
				} `json:"result"`
			} `json:"data"`
		}
		if err := s.get("/api/v1/query?query="+url.QueryEscape(series+"[1m]"), &body); err != nil {
			return false, err
		}
		if len(body.Data.Result) == 0 {
			return false, fmt.Errorf("no samples of %s", series)
		}
		for _, r := range body.Data.Result {
			if len(r.Values) == 0 {
				return false, nil
			}
			sec, ok := r.Values[len(r.Values)-1][0].(float64)
			if !ok {
				return false, fmt.Errorf("sample time %v is not a number", r.Values[len(r.Values)-1][0])
			}
			if time.UnixMilli(int64(sec*1000 + 0.5)).Before(at) {
				return false, nil
			}
		}
		return true, nil
	})
}

func (s *Server) waitFor(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("promtest: waited %s for %s (last error: %v); %s log:\n%s", timeout, what, err, s.name, s.Log())
		}
		time.Sleep(pollEvery)
	}
}

func (s *Server) get(path string, into any) error {
	resp, err := s.client.Get(s.URL + path)
	if err != nil {
		return err
	}
	derr := json.NewDecoder(resp.Body).Decode(into)
	if err := errors.Join(derr, resp.Body.Close()); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return nil
}
