package sim

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

type errBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    int     `json:"code"`
	} `json:"error"`
}

func TestBadRequests(t *testing.T) {
	spec := stepModel("m", time.Millisecond, 1e6)
	spec.MaxModelLen = 1024
	_, ts := newTestServer(t, Config{Models: []ModelSpec{spec}})
	long := strings.Repeat("x", 4*2000)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		typ, param               string
	}{
		{"invalid json", "POST", "/v1/chat/completions", `{"model":`, 400, "BadRequestError", ""},
		{"missing messages", "POST", "/v1/chat/completions", `{"model":"m"}`, 400, "BadRequestError", "messages"},
		{"empty messages", "POST", "/v1/chat/completions", `{"model":"m","messages":[]}`, 400, "BadRequestError", "messages"},
		{"missing prompt", "POST", "/v1/completions", `{"model":"m"}`, 400, "BadRequestError", "prompt"},
		{"max_tokens 0", "POST", "/v1/completions", `{"model":"m","prompt":"a","max_tokens":0}`, 400, "BadRequestError", "max_tokens"},
		{"max_tokens negative", "POST", "/v1/completions", `{"model":"m","prompt":"a","max_tokens":-5}`, 400, "BadRequestError", "max_tokens"},
		{"max_tokens string", "POST", "/v1/completions", `{"model":"m","prompt":"a","max_tokens":"ten"}`, 400, "BadRequestError", "max_tokens"},
		{"max_tokens fraction", "POST", "/v1/completions", `{"model":"m","prompt":"a","max_tokens":1.5}`, 400, "BadRequestError", "max_tokens"},
		{"max_completion_tokens 0", "POST", "/v1/chat/completions", `{"model":"m","max_completion_tokens":0,"messages":[{"role":"user","content":"a"}]}`, 400, "BadRequestError", "max_tokens"},
		{"context overflow", "POST", "/v1/completions", `{"model":"m","prompt":"a","max_tokens":5000}`, 400, "BadRequestError", "max_tokens"},
		{"prompt too long", "POST", "/v1/completions", `{"model":"m","prompt":"` + long + `"}`, 400, "BadRequestError", "messages"},
		{"n=2", "POST", "/v1/completions", `{"model":"m","prompt":"a","n":2}`, 400, "BadRequestError", "n"},
		{"unknown model", "POST", "/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"a"}]}`, 404, "NotFoundError", "model"},
		{"GET chat", "GET", "/v1/chat/completions", ``, 405, "MethodNotAllowed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e errBody
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatalf("body is not error JSON: %v", err)
			}
			param := ""
			if e.Error.Param != nil {
				param = *e.Error.Param
			}
			if resp.StatusCode != tc.status || e.Error.Code != tc.status || e.Error.Type != tc.typ ||
				param != tc.param || e.Error.Message == "" || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("got %d %+v param %q", resp.StatusCode, e.Error, param)
			}
		})
	}
}

// With one batch slot and a one-deep queue, the third concurrent request
// is refused with 429 and Retry-After.
func TestQueueFull429(t *testing.T) {
	spec := stepModel("m", 5*time.Millisecond, 1e6)
	spec.MaxBatch, spec.MaxQueue, spec.MaxBatchedTokens = 1, 1, 2048
	s, ts := newTestServer(t, Config{Models: []ModelSpec{spec}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"model":"m","stream":true,"max_tokens":1000,"ignore_eos":true,"prompt":"a"}`
	// One at a time: with a 1-deep queue, a second request arriving before
	// the engine admitted the first would itself get the 429.
	go streamRequest(t, ctx, ts.URL, "/v1/completions", body)
	eventually(t, 5*time.Second, "one running", func() bool { return s.Stats()[0].Running == 1 })
	go streamRequest(t, ctx, ts.URL, "/v1/completions", body)
	eventually(t, 5*time.Second, "one waiting", func() bool { return s.Stats()[0].Waiting == 1 })
	resp, b := postJSON(t, ts.URL, "/v1/completions", body)
	var e errBody
	json.Unmarshal(b, &e)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || e.Error.Type != "RateLimitError" {
		t.Errorf("got %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
}

// fakeClock is a settable wall clock for scenario tests.
type fakeClock struct{ t atomicTime }

func TestOutage503(t *testing.T) {
	clk := newFakeClock()
	spec := stepModel("m", 5*time.Millisecond, 1e6)
	s, ts := newTestServer(t, Config{Clock: clk.Now, Models: []ModelSpec{spec, stepModel("other", 5*time.Millisecond, 1e6)},
		Scenario: Scenario{Events: []Event{{At: time.Minute, Kind: EventOutage, Model: "m", For: 30 * time.Second}}}})
	ctx := context.Background()
	body := `{"model":"m","stream":true,"max_tokens":2000,"ignore_eos":true,"prompt":"a"}`
	// A stream in flight when the outage starts gets a mid-stream error.
	done := make(chan streamResult)
	go func() { done <- streamRequest(t, ctx, ts.URL, "/v1/completions", body) }()
	eventually(t, 2*time.Second, "stream running", func() bool { return s.Stats()[0].Running == 1 })
	clk.Set(time.Minute + 5*time.Second)
	r := <-done
	if r.status != 200 || !strings.Contains(r.errorMsg, "unavailable") || r.events[len(r.events)-1] != "[DONE]" {
		t.Errorf("in-flight stream: status %d err %q events %d", r.status, r.errorMsg, len(r.events))
	}
	resp, b := postJSON(t, ts.URL, "/v1/completions", `{"model":"m","prompt":"a","max_tokens":3}`)
	var e errBody
	json.Unmarshal(b, &e)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "25" || e.Error.Type != "ServiceUnavailableError" {
		t.Errorf("during outage: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	if resp, _ := postJSON(t, ts.URL, "/v1/completions", `{"model":"other","prompt":"a","max_tokens":3}`); resp.StatusCode != 200 {
		t.Errorf("other model during outage: %d", resp.StatusCode)
	}
	if resp, err := http.Get(ts.URL + "/health"); err != nil || resp.StatusCode != 200 {
		t.Errorf("health with one model up: %v", resp.StatusCode)
	}
	clk.Set(time.Minute + 31*time.Second)
	if resp, b := postJSON(t, ts.URL, "/v1/completions", `{"model":"m","prompt":"a","max_tokens":3}`); resp.StatusCode != 200 {
		t.Errorf("after recovery: %d %s", resp.StatusCode, b)
	}
	fams := scrape(t, ts.URL)
	if got := metricValue(t, fams, "vllm:request_success_total", map[string]string{"model_name": "m", "finished_reason": "abort"}).GetCounter().GetValue(); got != 1 {
		t.Errorf("aborted by outage: %v", got)
	}
}
