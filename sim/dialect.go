package sim

// dialect is what differs between /v1/completions and /v1/chat/completions;
// the request lifecycle in the handler is shared.
type dialect interface {
	// name labels metrics.
	name() string
	decode(body []byte) (apiRequest, error)
	idPrefix() string
	response(meta responseMeta, text, finish string, usage *usageBody) any
	// preamble is the first stream chunk, or nil when the API has none.
	preamble(meta responseMeta) any
	// chunk carries one token; finish is nil until the last token.
	chunk(meta responseMeta, text string, finish *string) any
	usageChunk(meta responseMeta, usage *usageBody) any
}

type completionsAPI struct{}

func (completionsAPI) name() string                           { return "completions" }
func (completionsAPI) decode(body []byte) (apiRequest, error) { return decodeCompletion(body) }
func (completionsAPI) idPrefix() string                       { return "cmpl-" }
func (completionsAPI) preamble(responseMeta) any              { return nil }
func (completionsAPI) usageChunk(m responseMeta, u *usageBody) any {
	m.Object = "text_completion"
	return completion{responseMeta: m, Choices: []completionChoice{}, Usage: u}
}

func (completionsAPI) response(m responseMeta, text, finish string, u *usageBody) any {
	m.Object = "text_completion"
	return completion{responseMeta: m, Choices: []completionChoice{{Text: text, FinishReason: &finish}}, Usage: u}
}

func (completionsAPI) chunk(m responseMeta, text string, finish *string) any {
	m.Object = "text_completion"
	return completion{responseMeta: m, Choices: []completionChoice{{Text: text, FinishReason: finish}}}
}

type chatAPI struct{}

func (chatAPI) name() string                           { return "chat_completions" }
func (chatAPI) decode(body []byte) (apiRequest, error) { return decodeChat(body) }
func (chatAPI) idPrefix() string                       { return "chatcmpl-" }

func (chatAPI) response(m responseMeta, text, finish string, u *usageBody) any {
	m.Object = "chat.completion"
	msg := &chatContent{Role: "assistant", Content: text}
	return chatCompletion{responseMeta: m, Choices: []chatChoice{{Message: msg, FinishReason: &finish}}, Usage: u}
}

// preamble announces the assistant role with empty content, as OpenAI and
// vLLM do before the first token.
func (chatAPI) preamble(m responseMeta) any {
	m.Object = "chat.completion.chunk"
	return chatCompletion{responseMeta: m, Choices: []chatChoice{{Delta: &chatContent{Role: "assistant"}}}}
}

func (chatAPI) chunk(m responseMeta, text string, finish *string) any {
	m.Object = "chat.completion.chunk"
	return chatCompletion{responseMeta: m, Choices: []chatChoice{{Delta: &chatContent{Content: text}, FinishReason: finish}}}
}

func (chatAPI) usageChunk(m responseMeta, u *usageBody) any {
	m.Object = "chat.completion.chunk"
	return chatCompletion{responseMeta: m, Choices: []chatChoice{}, Usage: u}
}
