package sim

// responseMeta is what every response and chunk of one request repeats.
type responseMeta struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	// KVTransferParams answers a prefill request (pd.go).
	KVTransferParams *kvTransferParams `json:"kv_transfer_params,omitempty"`
}

type usageBody struct {
	PromptTokens        int                  `json:"prompt_tokens"`
	CompletionTokens    int                  `json:"completion_tokens"`
	TotalTokens         int                  `json:"total_tokens"`
	PromptTokensDetails *promptTokensDetails `json:"prompt_tokens_details,omitempty"`
}

type promptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// usageBodyOf renders u; details adds prompt_tokens_details even when nothing
// was cached, so clients can tell "no hit" from "not reported".
func usageBodyOf(u Usage, details bool) *usageBody {
	b := &usageBody{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens()}
	if details {
		b.PromptTokensDetails = &promptTokensDetails{CachedTokens: u.CachedTokens}
	}
	return b
}

// completion is a /v1/completions response or stream chunk.
type completion struct {
	responseMeta
	Choices []completionChoice `json:"choices"`
	Usage   *usageBody         `json:"usage,omitempty"`
}

type completionChoice struct {
	Index        int     `json:"index"`
	Text         string  `json:"text"`
	Logprobs     any     `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
}

// chatCompletion is a /v1/chat/completions response or stream chunk; a
// response fills Message and a chunk fills Delta.
type chatCompletion struct {
	responseMeta
	Choices []chatChoice `json:"choices"`
	Usage   *usageBody   `json:"usage,omitempty"`
}

type chatChoice struct {
	Index        int          `json:"index"`
	Message      *chatContent `json:"message,omitempty"`
	Delta        *chatContent `json:"delta,omitempty"`
	Logprobs     any          `json:"logprobs"`
	FinishReason *string      `json:"finish_reason"`
}

type chatContent struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content"`
}

type modelList struct {
	Object string      `json:"object"`
	Data   []modelCard `json:"data"`
}

type modelCard struct {
	ID          string `json:"id"`
	Object      string `json:"object"`
	Created     int64  `json:"created"`
	OwnedBy     string `json:"owned_by"`
	Root        string `json:"root"`
	MaxModelLen int    `json:"max_model_len"`
}
