package sim

// JSON shapes of non-streaming responses, as structs so the field order
// matches vLLM's (encoding/json would sort map keys).

type usageJSON struct {
	PromptTokens            int                    `json:"prompt_tokens"`
	TotalTokens             int                    `json:"total_tokens"`
	CompletionTokens        int                    `json:"completion_tokens"`
	PromptTokensDetails     any                    `json:"prompt_tokens_details"`
	CompletionTokensDetails *completionDetailsJSON `json:"completion_tokens_details,omitempty"`
}

type completionDetailsJSON struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

type messageJSON struct {
	Role             string `json:"role"`
	ReasoningContent any    `json:"reasoning_content"`
	Content          string `json:"content"`
	ToolCalls        []any  `json:"tool_calls"`
}

type choiceJSON struct {
	Index        int          `json:"index"`
	Message      *messageJSON `json:"message,omitempty"`
	Text         *string      `json:"text,omitempty"`
	Logprobs     any          `json:"logprobs"`
	FinishReason string       `json:"finish_reason"`
	StopReason   any          `json:"stop_reason"`
}

type completionJSON struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []choiceJSON `json:"choices"`
	Usage   usageJSON    `json:"usage"`
}

type permissionJSON struct {
	ID                 string `json:"id"`
	Object             string `json:"object"`
	Created            int64  `json:"created"`
	AllowCreateEngine  bool   `json:"allow_create_engine"`
	AllowSampling      bool   `json:"allow_sampling"`
	AllowLogprobs      bool   `json:"allow_logprobs"`
	AllowSearchIndices bool   `json:"allow_search_indices"`
	AllowView          bool   `json:"allow_view"`
	AllowFineTuning    bool   `json:"allow_fine_tuning"`
	Organization       string `json:"organization"`
	Group              any    `json:"group"`
	IsBlocking         bool   `json:"is_blocking"`
}

type modelJSON struct {
	ID          string           `json:"id"`
	Object      string           `json:"object"`
	Created     int64            `json:"created"`
	OwnedBy     string           `json:"owned_by"`
	Root        string           `json:"root"`
	Parent      any              `json:"parent"`
	MaxModelLen int              `json:"max_model_len"`
	Permission  []permissionJSON `json:"permission"`
}

type modelListJSON struct {
	Object string      `json:"object"`
	Data   []modelJSON `json:"data"`
}
