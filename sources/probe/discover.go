package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/telemetry"
)

// target is where requests go, resolved from the URL the user gave.
type target struct {
	api      API
	root     string // server root, with any path prefix (https://openrouter.ai/api)
	query    string // kept on every request (Azure's ?api-version=)
	endpoint string // full stream URL; empty = root + Protocol.Path(model)
	models   string // model list URL
	model    string // named by the URL path (Triton)
	host     string // host:port for the default endpoint name
	display  string // scheme://host/path without userinfo or query
}

// endpointSuffixes maps endpoint paths to their protocol, longest first so
// /v1/chat/completions wins over /chat/completions.
func endpointSuffixes() []struct {
	suffix string
	api    API
} {
	return []struct {
		suffix string
		api    API
	}{
		{"/v1/chat/completions", OpenAIChat},
		{"/v1/completions", OpenAICompletions},
		{"/v1/responses", OpenAIResponses},
		{"/v1/messages", Anthropic},
		{"/chat/completions", OpenAIChat},
		{"/api/generate", OllamaGenerate},
		{"/api/chat", OllamaChat},
		{"/generate_stream", TGI},
		{"/completion", LlamaCpp},
	}
}

// resolveURL accepts the server root (http://host:8000), the OpenAI base
// (…/v1) or a full endpoint path, and says which protocol the path names.
// api, when set, overrides the detected protocol but not a given path.
func resolveURL(raw string, api API) (target, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return target{}, fmt.Errorf("invalid URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return target{}, fmt.Errorf("URL scheme %q: want http or https", u.Scheme)
	}
	if u.Host == "" {
		return target{}, errors.New("URL has no host")
	}
	t := target{host: hostPort(u), query: u.RawQuery}
	path := strings.TrimRight(u.Path, "/")
	base := *u
	base.User, base.RawQuery, base.Fragment, base.RawPath = nil, "", "", ""
	t.display = redactedURL(u)

	detected := API("")
	switch i := strings.Index(path, "/v2/models/"); {
	case i >= 0 && strings.HasSuffix(path, "/generate_stream"):
		detected = Triton
		rest := strings.TrimSuffix(path[i+len("/v2/models/"):], "/generate_stream")
		rest, _, _ = strings.Cut(rest, "/versions/")
		if m, err := url.PathUnescape(rest); err == nil {
			t.model = m
		} else {
			t.model = rest // not escaped after all: take it as written
		}
		t.endpoint = withPath(base, path)
		path = path[:i]
	default:
		for _, s := range endpointSuffixes() {
			if strings.HasSuffix(path, s.suffix) {
				detected = s.api
				t.endpoint = withPath(base, path)
				prefix := strings.TrimSuffix(path, s.suffix)
				if s.suffix == "/chat/completions" { // an OpenAI base without /v1
					t.models = withPath(base, prefix+"/models")
				}
				path = prefix
				break
			}
		}
	}
	if detected == "" {
		path = strings.TrimSuffix(path, "/v1")
	}
	t.root = withPath(base, path)
	if t.models == "" {
		t.models = t.root + "/v1/models"
	}
	t.api = api
	if t.api == "" {
		t.api = detected
	}
	if t.api == "" {
		t.api = OpenAIChat
	}
	return t, nil
}

func withPath(u url.URL, path string) string {
	u.Path = path
	return strings.TrimRight(u.String(), "/")
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// redactedURL is the URL as shown and logged: no userinfo, no query (API
// keys sometimes ride in ?key=).
func redactedURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.Fragment = nil, "", ""
	s := c.String()
	if u.RawQuery != "" {
		s += "?…"
	}
	return sanitize.Text(s)
}

// Model is one entry of a model list.
type Model struct {
	ID      string `json:"id"`
	OwnedBy string `json:"owned_by,omitempty"`
	// Parent is the base model of a LoRA adapter (vLLM's /v1/models
	// lists each adapter with its base as parent; null for a base).
	Parent string `json:"parent,omitempty"`
}

// listModels asks the server which models it serves: GET /v1/models (the
// OpenAI list), then the protocol's own listing where /v1/models is absent.
func (p *Prober) listModels(ctx context.Context) ([]Model, error) {
	models, err := p.getModels(ctx, withQuery(p.target.models, p.target.query), parseOpenAIModels)
	if err == nil && len(models) > 0 {
		return models, nil
	}
	switch p.proto.API() {
	case OllamaGenerate, OllamaChat:
		if m, err2 := p.getModels(ctx, p.target.root+"/api/tags", parseOllamaTags); err2 == nil && len(m) > 0 {
			return m, nil
		}
	case TGI:
		if m, err2 := p.getModels(ctx, p.target.root+"/info", parseTGIInfo); err2 == nil && len(m) > 0 {
			return m, nil
		}
	}
	if err == nil {
		err = errors.New("the server lists no models")
	}
	return nil, err
}

func (p *Prober) getModels(ctx context.Context, u string, parse func([]byte) ([]Model, error)) ([]Model, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	key, err := p.opts.Auth.token()
	if err != nil {
		return nil, err
	}
	p.setHeaders(req.Header, key)
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, errors.New(p.scrubberFor(key).scrub(sanitize.Text(err.Error())))
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		// An answer, not a model list: the server was reached.
		return nil, failf(ErrHTTPStatus, fmt.Sprintf("GET %s answered HTTP %d%s", p.displayOf(u), resp.StatusCode,
			excerptSuffix(mediaType(resp.Header), sanitize.Text(p.scrubberFor(key).scrub(bodyExcerpt(body))))))
	}
	models, err := parse(body)
	if err != nil {
		return nil, failf(ErrInvalidEvent, fmt.Sprintf("GET %s answered no model list (%v)%s", p.displayOf(u), err,
			excerptSuffix(mediaType(resp.Header), sanitize.Text(p.scrubberFor(key).scrub(bodyExcerpt(body))))))
	}
	s := p.scrubberFor(key)
	for i := range models {
		models[i].ID = sanitize.Text(s.scrub(models[i].ID))
		models[i].OwnedBy = sanitize.Text(s.scrub(models[i].OwnedBy))
		models[i].Parent = sanitize.Text(s.scrub(models[i].Parent))
	}
	return models, nil
}

func (p *Prober) displayOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "?"
	}
	return redactedURL(u)
}

func parseOpenAIModels(b []byte) ([]Model, error) {
	var l struct {
		Data []Model `json:"data"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("model list: %w", err)
	}
	return l.Data, nil
}

func parseOllamaTags(b []byte) ([]Model, error) {
	var l struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, err
	}
	out := make([]Model, 0, len(l.Models))
	for _, m := range l.Models {
		out = append(out, Model{ID: m.Name, OwnedBy: "ollama"})
	}
	return out, nil
}

func parseTGIInfo(b []byte) ([]Model, error) {
	var info struct {
		ModelID string `json:"model_id"`
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, err
	}
	if info.ModelID == "" {
		return nil, nil
	}
	return []Model{{ID: info.ModelID, OwnedBy: "tgi"}}, nil
}

// guessEngine names the serving engine from the protocol, or for the
// OpenAI-compatible APIs from /v1/models owned_by (vLLM says "vllm").
func guessEngine(api API, ownedBy string) telemetry.Engine {
	switch api {
	case TGI:
		return telemetry.EngineTGI
	case OllamaGenerate, OllamaChat:
		return telemetry.EngineOllama
	case LlamaCpp:
		return telemetry.EngineLlamaCpp
	case Triton:
		return telemetry.EngineTriton
	case Anthropic:
		return telemetry.EngineAnthropic
	}
	switch o := strings.ToLower(ownedBy); {
	case o == "vllm":
		return telemetry.EngineVLLM
	case o == "sglang":
		return telemetry.EngineSGLang
	case o == "llamacpp" || o == "llama.cpp":
		return telemetry.EngineLlamaCpp
	case o == "lmdeploy":
		return telemetry.EngineLMDeploy
	case o == "tgi" || o == "huggingface" || o == "text-generation-inference":
		return telemetry.EngineTGI
	case o == "ollama" || o == "library":
		return telemetry.EngineOllama
	case o == "tensorrt_llm" || o == "trtllm":
		return telemetry.EngineTRTLLM
	case o == "nvidia" || o == "nim":
		return telemetry.EngineNIM
	case o == "openai" || o == "system" || strings.HasPrefix(o, "openai-"):
		return telemetry.EngineOpenAI
	}
	return telemetry.EngineUnknown
}

// warmPath is a cheap GET that opens a connection without generating.
func warmPath(api API) string {
	switch api {
	case TGI, LlamaCpp:
		return "/health"
	case OllamaGenerate, OllamaChat:
		return "/api/version"
	case Triton:
		return "/v2/health/ready"
	default:
		return "/v1/models"
	}
}

// ListModels asks the server which models it serves with GETs only
// (nothing is generated): /v1/models, then the protocol's own listing.
// Discovery uses it to tell an LLM server from any other HTTP server.
func (p *Prober) ListModels(ctx context.Context) ([]Model, error) { return p.listModels(ctx) }

// GuessEngine names the serving engine from the protocol and a listed
// model's owned_by, or telemetry.EngineUnknown.
func GuessEngine(api API, ownedBy string) telemetry.Engine { return guessEngine(api, ownedBy) }
