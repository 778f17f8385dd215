package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Request is a generation request for the in-process API (Server.Generate)
// and the internal form of every HTTP request.
type Request struct {
	Model        string // served model name; "" = the first model
	Prompt       string // prompt text; its token count is estimated (EstimateTokens)
	PromptTokens int    // overrides the estimate when > 0
	MaxTokens    int    // 0 = up to the context limit, as vLLM does
	MinTokens    int    // vLLM's min_tokens: no natural stop before this
	IgnoreEOS    bool   // vLLM's ignore_eos: always generate MaxTokens
	// PrefixKey and PrefixTokens name a prompt prefix shared with other
	// requests (the prefix cache may hold it). A request with Prompt text
	// shares its whole prompt with identical ones when these are unset.
	PrefixKey    uint64
	PrefixTokens int
	// RemoteKV marks a decode worker's request under disaggregated
	// serving: a prefill worker computed the prompt's KV cache, which
	// arrives over the KV connector KVTransfer after submission. Until
	// then the request waits as vLLM's deferred ones do
	// (WAITING_FOR_REMOTE_KVS); it is then admitted with its prompt in
	// cache and decodes at once.
	RemoteKV   bool
	KVTransfer time.Duration
}

// EstimateTokens is the simulator's tokenizer: about 4 characters per
// token, at least 1.
func EstimateTokens(text string) int {
	return max(1, (len(text)+3)/4)
}

// chatTemplateTokens approximates the role markers a chat template adds
// per message (Llama-3 style headers cost ~4 tokens).
const chatTemplateTokens = 4

// newSeq validates a request against the model's limits and fixes its
// outcome: the answer length is drawn from a log-normal around
// MeanOutputTokens using a seed derived from the prompt, so the same
// prompt gets the same answer.
func (e *engine) newSeq(req Request) (*seq, error) {
	prompt := req.PromptTokens
	if prompt <= 0 {
		prompt = EstimateTokens(req.Prompt)
	}
	limit := e.spec.MaxModelLen
	if prompt >= limit {
		return nil, badRequest("messages", fmt.Sprintf("This model's maximum context length is %d tokens. "+
			"However, your request has %d input tokens. Please reduce the length of the input messages.", limit, prompt))
	}
	if req.MaxTokens < 0 || req.MinTokens < 0 {
		return nil, badRequest("max_tokens", "max_tokens and min_tokens must be non-negative")
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = limit - prompt
	} else if prompt+maxTokens > limit {
		return nil, badRequest("max_tokens", fmt.Sprintf("This model's maximum context length is %d tokens. "+
			"However, you requested %d tokens (%d in the messages, %d in the completion). "+
			"Please reduce the length of the messages or completion.", limit, prompt+maxTokens, prompt, maxTokens))
	}
	s := newSeq()
	s.id = e.srv.ids.Add(1)
	s.prompt = prompt
	s.maxTokens = maxTokens
	s.paramMax = maxTokens
	s.textSeed = textSeed(e.srv.cfg.Seed, e.spec.Name, req.Prompt)
	s.prefixKey, s.prefixTokens = req.PrefixKey, min(req.PrefixTokens, prompt)
	if req.Prompt == "" {
		// Synthetic (token-count-only) prompts still need distinct answers.
		s.textSeed = mix(s.textSeed ^ s.id)
	} else if s.prefixTokens == 0 {
		s.prefixKey, s.prefixTokens = s.textSeed, prompt
	}
	s.remoteKV, s.kvTransfer = req.RemoteKV, int64(req.KVTransfer)
	if req.Model != e.spec.Name {
		s.adapter = req.Model // engineFor served it: one of the base's adapters
	}
	s.target, s.finishAt = maxTokens, finishLength
	s.reasoning = e.spec.reasoningLength(s.textSeed)
	if !req.IgnoreEOS {
		r := rand.New(rand.NewPCG(s.textSeed, 0x5eed))
		const sigma = 0.6
		natural := int(math.Round(float64(e.spec.MeanOutputTokens) * math.Exp(sigma*r.NormFloat64())))
		natural = max(natural+s.reasoning, req.MinTokens, 1) // the answer follows the thinking
		if natural < maxTokens {
			s.target, s.finishAt = natural, finishStop
		}
	}
	return s, nil
}
