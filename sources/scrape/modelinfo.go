package scrape

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ttftop/ttftop/sanitize"
)

// modelInfo caches the model name read from an info endpoint.
type modelInfo struct {
	model   string
	ok      bool
	tried   time.Time
	lastErr string
}

// defaultModel is the model of series without a model label: the
// configured Model, else the engine's info endpoint (TGI GET /info
// "model_id", llama.cpp GET /v1/models), else "".
func (sc *scrape) defaultModel() string {
	if sc.s.cfg.Model != "" {
		return sanitize.Text(sc.s.cfg.Model)
	}
	mi := sc.spec.ModelInfo
	if mi.Path == "" {
		return ""
	}
	info := &sc.s.st.info
	if info.ok {
		return info.model
	}
	if !info.tried.IsZero() && time.Since(info.tried) < ModelInfoRetry {
		if info.lastErr != "" {
			sc.warn(info.lastErr)
		}
		return ""
	}
	info.tried = time.Now()
	model, err := sc.fetchModel(mi.Path, mi.Field)
	if err != nil {
		info.lastErr = fmt.Sprintf("model name from %s: %v", mi.Path, err)
		sc.warn(info.lastErr)
		return ""
	}
	info.model, info.ok, info.lastErr = model, true, ""
	return model
}

func (sc *scrape) fetchModel(path, field string) (string, error) {
	base := strings.TrimRight(sc.s.cfg.URL, "/")
	resp, err := sc.s.client.Get(sc.ctx, base+path, "application/json")
	if err != nil {
		return "", err
	}
	var doc any
	if err := json.Unmarshal([]byte(resp.Body), &doc); err != nil {
		return "", fmt.Errorf("invalid JSON")
	}
	v, ok := jsonPath(doc, field)
	if !ok || v == "" {
		return "", fmt.Errorf("no %s field", field)
	}
	return sanitize.Text(v), nil // network string enters here
}

// jsonPath walks a dotted path ("data.0.id") to a string.
func jsonPath(doc any, path string) (string, bool) {
	cur := doc
	for _, part := range strings.Split(path, ".") {
		switch node := cur.(type) {
		case map[string]any:
			cur = node[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(node) {
				return "", false
			}
			cur = node[i]
		default:
			return "", false
		}
	}
	s, ok := cur.(string)
	return s, ok
}
