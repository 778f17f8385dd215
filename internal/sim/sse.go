package sim

import (
	"encoding/json"
	"strconv"
)

// chunkFormat pre-renders the invariant parts of a request's stream
// chunks so the per-token work is a few appends (no JSON encoding on the
// hot path). The layout follows vLLM's OpenAI server field order.
type chunkFormat struct {
	chat bool
	head []byte // `data: {"id":...,"model":"M",`
}

func newChunkFormat(chat bool, id string, created int64, model string) *chunkFormat {
	obj := "text_completion"
	if chat {
		obj = "chat.completion.chunk"
	}
	m, _ := json.Marshal(model)
	head := `{"id":"` + id + `","object":"` + obj + `","created":` + strconv.FormatInt(created, 10) +
		`,"model":` + string(m) + `,`
	return &chunkFormat{chat: chat, head: []byte("data: " + head)}
}

// role is the role-only first chunk of a chat stream.
func (f *chunkFormat) role(b []byte) []byte {
	b = append(b, f.head...)
	return append(b, `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
}

// token appends one token's chunk; finish != "" marks the last one (vLLM
// puts finish_reason on the chunk of the final token, with empty content
// for the EOS token of a natural stop). A reasoning token goes out on chat
// as delta.reasoning_content (vLLM's reasoning parsers); completions
// stream the thinking as plain text, as vLLM does there.
func (f *chunkFormat) token(b []byte, text, finish string, reasoning bool) []byte {
	b = append(b, f.head...)
	if f.chat {
		if reasoning {
			b = append(b, `"choices":[{"index":0,"delta":{"reasoning_content":`...)
		} else {
			b = append(b, `"choices":[{"index":0,"delta":{"content":`...)
		}
		b = appendJSONString(b, text)
		b = append(b, `},"logprobs":null,"finish_reason":`...)
	} else {
		b = append(b, `"choices":[{"index":0,"text":`...)
		b = appendJSONString(b, text)
		b = append(b, `,"logprobs":null,"finish_reason":`...)
	}
	if finish == "" {
		if f.chat {
			return append(b, "null}]}\n\n"...)
		}
		return append(b, "null,\"stop_reason\":null}]}\n\n"...)
	}
	b = append(b, '"')
	b = append(b, finish...)
	return append(b, "\",\"stop_reason\":null}]}\n\n"...)
}

// usage appends the include_usage chunk (choices: []), with
// completion_tokens_details.reasoning_tokens when the model thought.
func (f *chunkFormat) usage(b []byte, prompt, completion, reasoning int) []byte {
	b = append(b, f.head...)
	b = append(b, `"choices":[],`...)
	return appendUsage(b, prompt, completion, reasoning)
}

// withUsage adds the usage so far to the chunk that b ends with (vLLM's
// continuous_usage_stats): `…]}` + "\n\n" becomes `…],"usage":{…}}` + "\n\n".
func (f *chunkFormat) withUsage(b []byte, prompt, completion, reasoning int) []byte {
	b = b[:len(b)-len("}\n\n")]
	b = append(b, ',')
	return appendUsage(b, prompt, completion, reasoning)
}

// appendUsage appends `"usage":{…}}` and the event's end.
func appendUsage(b []byte, prompt, completion, reasoning int) []byte {
	b = append(b, `"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt+completion), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	if reasoning > 0 {
		b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(reasoning), 10)
		b = append(b, '}')
	}
	return append(b, "}}\n\n"...)
}

// errorEvent appends a mid-stream error the way vLLM reports one after
// headers went out: an error object, then [DONE].
func errorEvent(b []byte, e *apiError) []byte {
	b = append(b, "data: "...)
	b = append(b, e.body()...)
	return append(b, "\n\n"...)
}

func done(b []byte) []byte { return append(b, "data: [DONE]\n\n"...) }

// appendJSONString quotes s; the word list is plain ASCII, so the slow path
// only runs for model-independent odd input.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
