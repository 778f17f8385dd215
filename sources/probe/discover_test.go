package probe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

func TestResolveURL(t *testing.T) {
	cases := []struct {
		in, api                       string
		wantAPI                       API
		wantStream, wantModels, wantR string
		display, host                 string
	}{
		{"http://h:8000", "", OpenAIChat, "http://h:8000/v1/chat/completions", "http://h:8000/v1/models", "http://h:8000", "http://h:8000", "h:8000"},
		{"http://h:8000/", "", OpenAIChat, "http://h:8000/v1/chat/completions", "http://h:8000/v1/models", "http://h:8000", "http://h:8000/", "h:8000"},
		{"http://h:8000/v1", "", OpenAIChat, "http://h:8000/v1/chat/completions", "http://h:8000/v1/models", "http://h:8000", "http://h:8000/v1", "h:8000"},
		{"http://h:8000/v1/", "openai-completions", OpenAICompletions, "http://h:8000/v1/completions", "http://h:8000/v1/models", "http://h:8000", "http://h:8000/v1/", "h:8000"},
		{"http://h:8000/v1/completions", "", OpenAICompletions, "http://h:8000/v1/completions", "http://h:8000/v1/models", "http://h:8000", "http://h:8000/v1/completions", "h:8000"},
		{"https://openrouter.ai/api/v1", "", OpenAIChat, "https://openrouter.ai/api/v1/chat/completions", "https://openrouter.ai/api/v1/models", "https://openrouter.ai/api", "https://openrouter.ai/api/v1", "openrouter.ai:443"},
		{"https://x.example/openai/chat/completions", "", OpenAIChat, "https://x.example/openai/chat/completions", "https://x.example/openai/models", "https://x.example/openai", "https://x.example/openai/chat/completions", "x.example:443"},
		{"http://h/v1/responses", "", OpenAIResponses, "http://h/v1/responses", "http://h/v1/models", "http://h", "http://h/v1/responses", "h:80"},
		{"https://api.anthropic.com/v1/messages", "", Anthropic, "https://api.anthropic.com/v1/messages", "https://api.anthropic.com/v1/models", "https://api.anthropic.com", "https://api.anthropic.com/v1/messages", "api.anthropic.com:443"},
		{"http://h:8080/generate_stream", "", TGI, "http://h:8080/generate_stream", "http://h:8080/v1/models", "http://h:8080", "http://h:8080/generate_stream", "h:8080"},
		{"http://h:11434/api/generate", "", OllamaGenerate, "http://h:11434/api/generate", "http://h:11434/v1/models", "http://h:11434", "http://h:11434/api/generate", "h:11434"},
		{"http://h:11434", "ollama-chat", OllamaChat, "http://h:11434/api/chat", "http://h:11434/v1/models", "http://h:11434", "http://h:11434", "h:11434"},
		{"http://h:8080/completion", "", LlamaCpp, "http://h:8080/completion", "http://h:8080/v1/models", "http://h:8080", "http://h:8080/completion", "h:8080"},
		{"http://h:8000/v2/models/ensemble/generate_stream", "", Triton, "http://h:8000/v2/models/ensemble/generate_stream", "http://h:8000/v1/models", "http://h:8000", "http://h:8000/v2/models/ensemble/generate_stream", "h:8000"},
		{"http://user:pw@h:8000/v1?key=abc", "", OpenAIChat, "http://h:8000/v1/chat/completions?key=abc", "http://h:8000/v1/models?key=abc", "http://h:8000", "http://h:8000/v1?…", "h:8000"},
	}
	for _, c := range cases {
		p, err := New(Options{URL: c.in, API: API(c.api), Model: "m"})
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if p.API() != c.wantAPI || p.endpointURL() != c.wantStream || withQuery(p.target.models, p.target.query) != c.wantModels ||
			p.target.root != c.wantR || p.target.display != c.display || p.target.host != c.host {
			t.Errorf("%s: api %s stream %s models %s root %s display %s host %s", c.in, p.API(), p.endpointURL(),
				withQuery(p.target.models, p.target.query), p.target.root, p.target.display, p.target.host)
		}
	}
	if p, _ := New(Options{URL: "http://h:8000/v2/models/ensemble/generate_stream"}); p == nil || p.Model() != "ensemble" {
		t.Error("Triton model not taken from the path")
	}
}

func TestDiscoverAndEngine(t *testing.T) {
	for _, c := range []struct {
		ownedBy string
		want    telemetry.Engine
	}{{"vllm", telemetry.EngineVLLM}, {"sglang", telemetry.EngineSGLang}, {"llamacpp", telemetry.EngineLlamaCpp}, {"openai", telemetry.EngineOpenAI}, {"someone", telemetry.EngineUnknown}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"data":[{"id":"model-a","owned_by":"` + c.ownedBy + `"}]}`))
		}))
		p, err := New(Options{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		models, err := p.Discover(context.Background())
		srv.Close()
		if err != nil || len(models) != 1 || p.Model() != "model-a" || p.Endpoint().Engine != c.want {
			t.Errorf("owned_by %s: models %v err %v engine %s", c.ownedBy, models, err, p.Endpoint().Engine)
		}
		if name := p.Endpoint().Name; name != srv.Listener.Addr().String()+"/model-a" {
			t.Errorf("name %q", name)
		}
	}
	// A protocol that needs a model fails clearly without one.
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	p, _ := New(Options{URL: srv.URL})
	if _, err := p.Discover(context.Background()); err == nil {
		t.Error("no model and no listing accepted")
	}
	// TGI needs none; its engine is known from the protocol.
	p, _ = New(Options{URL: srv.URL + "/generate_stream"})
	if _, err := p.Discover(context.Background()); err != nil || p.Endpoint().Engine != telemetry.EngineTGI {
		t.Errorf("tgi: %v %s", err, p.Endpoint().Engine)
	}
}

// TestRequestBodies: each protocol sends what its server expects.
func TestRequestBodies(t *testing.T) {
	seed := int64(3)
	spec := RequestSpec{Model: "m", Prompt: "hi", MaxTokens: 5, Seed: &seed, IncludeUsage: true}
	want := map[API]string{
		OpenAIChat:        `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":5,"temperature":0,"seed":3,"stream":true,"stream_options":{"include_usage":true}}`,
		OpenAICompletions: `{"model":"m","prompt":"hi","max_tokens":5,"temperature":0,"seed":3,"stream":true,"stream_options":{"include_usage":true}}`,
		OpenAIResponses:   `{"model":"m","input":"hi","max_output_tokens":5,"temperature":0,"stream":true}`,
		Anthropic:         `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":5,"temperature":0,"stream":true}`,
		TGI:               `{"inputs":"hi","parameters":{"max_new_tokens":5,"do_sample":false,"seed":3,"details":true},"stream":true}`,
		OllamaGenerate:    `{"model":"m","prompt":"hi","stream":true,"options":{"num_predict":5,"temperature":0,"seed":3}}`,
		OllamaChat:        `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"options":{"num_predict":5,"temperature":0,"seed":3}}`,
		LlamaCpp:          `{"prompt":"hi","n_predict":5,"temperature":0,"seed":3,"stream":true}`,
		Triton:            `{"text_input":"hi","max_tokens":5,"temperature":0,"stream":true}`,
	}
	for _, a := range APIs() {
		b, err := protocolFor(a).BuildRequest(spec)
		if err != nil || string(b) != want[a] {
			t.Errorf("%s: %s %v", a, b, err)
		}
		if protocolFor(a).API() != a {
			t.Errorf("%s: API() = %s", a, protocolFor(a).API())
		}
	}
	h := http.Header{}
	protocolFor(Anthropic).SetAuth(h, "k")
	if h.Get("x-api-key") != "k" || h.Get("anthropic-version") == "" || h.Get("Authorization") != "" {
		t.Errorf("anthropic headers %v", h)
	}
}
