package probe

import "strings"

// Models served without a reasoning parser (llama.cpp's native /completion,
// raw Ollama generate, TGI, vLLM without --reasoning-parser) stream their
// reasoning inside the answer text, between <think> and </think> at its
// start (DeepSeek-R1, Qwen3, QwQ). thinkTags finds those tags so that
// such reasoning counts as reasoning, not as the answer.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

type thinkState uint8

const (
	thinkUndecided thinkState = iota // no answer text yet, or only a prefix of <think>
	thinkInside                      // after <think>, before </think>
	thinkDone                        // the answer proper: no tags (or after </think>)
)

// thinkTags is the per-request tag state.
type thinkTags struct {
	state   thinkState
	head    strings.Builder // leading answer text while undecided
	pending []int           // events seen while undecided
	tail    string          // the last bytes inside, for a </think> split across events
}

// classify returns the parts of an answer-only event at index i, and the
// earlier events (pending) to relabel as reasoning once <think> is seen.
func (t *thinkTags) classify(i int, text string) (part Part, relabel []int) {
	switch t.state {
	case thinkDone:
		return PartAnswer, nil
	case thinkUndecided:
		if t.head.Len() < len(thinkOpen)+16 {
			t.head.WriteString(text)
		}
		lead := strings.TrimLeft(t.head.String(), " \t\r\n")
		switch {
		case strings.HasPrefix(lead, thinkOpen):
			t.state, relabel, t.pending = thinkInside, t.pending, nil
			rest := lead[len(thinkOpen):]
			return t.inside(rest), relabel
		case lead == "" || strings.HasPrefix(thinkOpen, lead):
			t.pending = append(t.pending, i) // still possibly a tag
			return PartAnswer, nil
		}
		t.state, t.pending = thinkDone, nil
		return PartAnswer, nil
	}
	return t.inside(text), nil
}

// inside scans reasoning text for the closing tag; the event that holds it
// is reasoning, and answer too when text follows the tag.
func (t *thinkTags) inside(text string) Part {
	joined := t.tail + text
	i := strings.Index(joined, thinkClose)
	if i < 0 {
		if keep := len(thinkClose) - 1; len(joined) > keep {
			joined = joined[len(joined)-keep:]
		}
		t.tail = joined
		return PartReasoning
	}
	t.state, t.tail = thinkDone, ""
	if strings.TrimSpace(joined[i+len(thinkClose):]) != "" {
		return PartReasoning | PartAnswer
	}
	return PartReasoning
}
