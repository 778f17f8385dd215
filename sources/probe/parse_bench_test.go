package probe

import (
	"io"
	"strings"
	"testing"
	"time"
)

// BenchmarkParseChatChunk is the per-event decode cost of the most common
// format (allocations matter at hundreds of streams).
func BenchmarkParseChatChunk(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}]}`)
	p := openAIChat{}.NewParser()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.ParseEvent(nil, data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamCore measures framing + parsing + metering of a whole
// 100-event stream from memory (no network).
func BenchmarkStreamCore(b *testing.B) {
	body := sseData(roleChunk) + strings.Repeat(sseData(chatChunk(" word")), 100) + sseData(finishChunk, usageChunk(100), "[DONE]")
	b.ReportAllocs()
	for b.Loop() {
		fr := &sseFramer{lr: newLineReader(strings.NewReader(body), time.Now(), DefaultMaxLineBytes)}
		parser := openAIChat{}.NewParser()
		m := newMeter(100)
		for {
			f, err := fr.next()
			if err == io.EOF {
				break
			}
			ev, err := parser.ParseEvent(f.name, f.data)
			if err != nil {
				b.Fatal(err)
			}
			m.add(f.at, &ev)
		}
		if m.finish(&Result{}).Events != 100 {
			b.Fatal("events")
		}
	}
}
