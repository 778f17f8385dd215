package probe

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ttftop/ttftop/internal/fixtures"
)

// simChunks are the simulator's chunk layouts (vLLM's field order): role,
// token, reasoning token, finish on the last token, completions token.
var simChunks = []string{
	`{"id":"chatcmpl-00ff","object":"chat.completion.chunk","created":1733000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-00ff","object":"chat.completion.chunk","created":1733000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-00ff","object":"chat.completion.chunk","created":1733000000,"model":"deepseek-ai/DeepSeek-R1-Distill-Llama-8B","choices":[{"index":0,"delta":{"reasoning_content":" think"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-00ff","object":"chat.completion.chunk","created":1733000000,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":null}]}`,
	`{"id":"cmpl-00ff","object":"text_completion","created":1733000000,"model":"m","choices":[{"index":0,"text":" word","logprobs":null,"finish_reason":null,"stop_reason":null}]}`,
}

// hostileChunks stray from the common shape in ways where a shortcut
// would decode differently from encoding/json.
var hostileChunks = []string{
	`{"model":"m","choices":[{"delta":{"Content":"folded key"}}]}`,
	`{"model":"m","choices":[{"delta":{"content":"a\"b\u00e9\n"}}]}`,
	`{"model":"m","choices":[{"delta":{"content":"x"}}],"choices":[{"delta":{}}]}`,
	`{"model":"m","model":"n","choices":[{"delta":{"content":"first model wins"}}]}`,
	`{"model":null,"choices":[{"delta":{"content":"x"}}]}`,
	`{"model":"m","choices":[{"delta":{"content":"a"},"delta":{"role":"assistant"}}]}`,
	`{"model":"m","choices":[{"delta":{"content":null},"text":"t"}]}`,
	`{"model":"m","choices":[{"finish_reason":"stop","finish_reason":null}]}`,
	`{"model":"m","choices":[{"index":01,"delta":{"content":"x"}}]}`,
	`{"model":"m","choices":[{"index":1.5,"delta":{"content":"x"}}]}`,
	`{"model":"m","choices":[{"delta":{"content":"x"}}]} trailing`,
	`{"model":"m","choices":[{"delta":{"content":"x"}}]`,
	`{"model":"m","choices":[]}`,
	`{"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}`,
	`{"model":"m","choices":[{"delta":{"content":"x"}}],"error":{"message":"boom"}}`,
	`{"model":"m","choices":[{"delta":{"content":"bad utf-8 ` + "\xff" + `"}}]}`,
	`{"model":"m","choices":[{"delta":{"content":"ok utf-8 é"}}]}`,
	` { "model" : "m" , "choices" : [ { "delta" : { "content" : "spaced" } } , { "text" : "two" } ] } `,
	`{"model":"m","choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{}"}}]}}]}`,
	`{"model":"m","choices":[{"logprobs":{"content":[]},"delta":{"content":"x"}}]}`,
	`{"model":"m","choices":[{"delta":{"content":"x"}}],"id":nul}`,
	`{"model":"m","choices":[{"delta":{"content":"x"}}],"created":-}`,
	`[{"model":"m"}]`,
}

// fixtureChunks are the JSON data lines of the OpenAI-format captures.
func fixtureChunks(t testing.TB) []string {
	dir := fixtures.Dir(t, "streams")
	paths, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			line = strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			if strings.HasPrefix(line, "{") {
				out = append(out, line)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// checkCommonChunk fails if decodeCommonChunk accepts data but decodes it
// differently from encoding/json, or accepts what encoding/json rejects.
func checkCommonChunk(t testing.TB, data string) (accepted bool) {
	t.Helper()
	var fast openAIChunk
	model, hasModel, ok := decodeCommonChunk([]byte(data), &fast)
	if !ok {
		return false
	}
	var want onceString
	slow := openAIChunk{Model: &want}
	if err := json.Unmarshal([]byte(data), &slow); err != nil {
		t.Fatalf("accepted what encoding/json rejects (%v): %s", err, data)
	}
	got := onceString{s: string(model), set: hasModel}
	fast.Model = slow.Model
	if got != want || !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%s\nfast: %+v model %+v\nslow: %+v model %+v", data, fast, got, slow, want)
	}
	return true
}

func TestCommonChunkMatchesEncodingJSON(t *testing.T) {
	captured := fixtureChunks(t)
	accepted := 0
	for _, c := range captured {
		if checkCommonChunk(t, c) {
			accepted++
		}
	}
	for _, c := range hostileChunks {
		checkCommonChunk(t, c)
	}
	// The shortcut must actually serve the simulator's and the common
	// captures' chunks, or the demo pays encoding/json again.
	for _, c := range simChunks {
		if !checkCommonChunk(t, c) {
			t.Errorf("the simulator's chunk took the slow path: %s", c)
		}
	}
	// Most captured token chunks too (escaped text and usage objects
	// take the slow path).
	if accepted*2 < len(captured) {
		t.Errorf("only %d of %d captured chunks took the shortcut", accepted, len(captured))
	}
	t.Logf("%d of %d captured chunks decoded without encoding/json", accepted, len(captured))
}

// TestParseEventSameBothWays runs whole streams through the parser and
// through encoding/json alone: the events must be identical.
func TestParseEventSameBothWays(t *testing.T) {
	corpus := append(append(fixtureChunks(t), simChunks...), hostileChunks...)
	fast := &openAIParser{}
	slow := &openAIParser{}
	for _, c := range corpus {
		got, gerr := fast.ParseEvent(nil, []byte(c))
		want, werr := parseSlow(slow, []byte(c))
		if (gerr == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s\nparsed: %+v, %v\nencoding/json: %+v, %v", c, got, gerr, want, werr)
		}
	}
}

// parseSlow is ParseEvent decoding with encoding/json only.
func parseSlow(p *openAIParser, data []byte) (Event, error) {
	if isDone(data) {
		return Event{Done: true}, nil
	}
	p.resetChunk()
	if err := p.decode(data, &p.chunk); err != nil {
		return Event{}, err
	}
	return p.event(data), nil
}

func FuzzCommonChunk(f *testing.F) {
	for _, c := range append(append(fixtureChunks(f), simChunks...), hostileChunks...) {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, data string) {
		checkCommonChunk(t, data)
	})
}
