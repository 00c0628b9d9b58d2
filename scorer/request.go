package scorer

import (
	"encoding/json"

	"github.com/warmroute/warmroute/tokenizer"
)

// Kind says which OpenAI API a request used.
type Kind int

// Request kinds.
const (
	// KindOther is any request whose body was not parsed (unknown path,
	// header-only request); it is routed on load alone.
	KindOther Kind = iota
	// KindCompletion is POST /v1/completions.
	KindCompletion
	// KindChat is POST /v1/chat/completions, and the agent APIs
	// (POST /v1/responses, POST /v1/messages) once converted to the chat
	// request vLLM renders for them; Path tells them apart.
	KindChat
)

// String names the kind for logs and metric labels.
func (k Kind) String() string {
	switch k {
	case KindCompletion:
		return "completion"
	case KindChat:
		return "chat"
	default:
		return "other"
	}
}

// Request is what the decision pipeline needs to know about one LLM request.
// The zero value is a request routed on load alone within the default pool.
type Request struct {
	Kind  Kind
	Path  string
	Model string
	// Prompts holds a completion's prompt strings (a single prompt is one entry).
	Prompts []string
	// PromptTokenIDs holds a completion's prompts given as token ids.
	PromptTokenIDs [][]int
	// Messages holds a chat request's messages in order.
	Messages []Message
	// Tools and ChatTemplateKwargs are kept verbatim for chat-template rendering.
	Tools              json.RawMessage
	ChatTemplateKwargs json.RawMessage
	// NoGenerationPrompt is set when the request turned off
	// add_generation_prompt (the default is on).
	NoGenerationPrompt bool
	// GenerationPromptSent is set when the request itself set
	// add_generation_prompt to true (not the default): vLLM's request model
	// refuses that together with continue_final_message.
	GenerationPromptSent bool
	// Documents is a chat request's documents, verbatim, for templates that
	// support retrieval.
	Documents json.RawMessage
	// ToolChoice is a chat request's tool_choice (a string or an object),
	// verbatim, or empty.
	ToolChoice json.RawMessage
	// ReasoningEffort is a chat request's reasoning_effort, or empty.
	ReasoningEffort string
	// DisabledThinking marks a /v1/messages request with thinking disabled:
	// its ReasoningEffort "none" becomes "low" for a chat template that
	// ignores "none", as vLLM's probe of the template decides
	// (tokenizer.ChatTemplate.DisabledThinkingEffort).
	DisabledThinking bool
	// SystemFirstMessages, when non-nil, replaces Messages for a chat
	// template that rejects a system message after the first: vLLM's
	// /v1/messages merges inline system messages into the leading one for
	// such a template (tokenizer.ChatTemplate.SystemFirst).
	SystemFirstMessages []Message
	// ContinueFinalMessage is a chat request's continue_final_message: the
	// last message is left open for the model to continue.
	ContinueFinalMessage bool
	// ChatTemplate is a chat request's chat_template: a named template of
	// the model's, or a template's source; empty for the default.
	ChatTemplate string
	// SpecialTokens is the request's add_special_tokens; AddSpecialTokens
	// resolves the default for its kind.
	SpecialTokens SpecialTokens
	Stream        bool
	CacheSalt     string
	BodyBytes     int
	// PreviousResponseID is a Responses request's previous_response_id: the
	// engine that stored that response must serve it (Options.Affinity).
	PreviousResponseID string
	// HarmonyResponses is a Responses request's fields as vLLM's Harmony
	// path reads them; a Harmony (GPT-OSS) pool renders the request from
	// them rather than from Messages (vLLM's chat conversion).
	HarmonyResponses *tokenizer.HarmonyResponsesRequest
	// Subset, when non-nil, restricts the candidates to these endpoints (the
	// gateway's subset hint). An empty non-nil slice allows none.
	Subset []string
}

// Message is one chat message. Content holds the text of a string content, or
// the text parts of a list content joined in order; Raw keeps the message as
// sent so templates can see every field.
type Message struct {
	Role    string
	Content string
	Raw     json.RawMessage
}

// SpecialTokens is a request's add_special_tokens: whether the engine adds the
// tokenizer's special tokens (such as BOS) when it encodes the prompt.
type SpecialTokens int8

// SpecialTokens values. The zero value is the engine's default for the kind.
const (
	SpecialTokensDefault SpecialTokens = iota
	SpecialTokensOn
	SpecialTokensOff
)

// AddSpecialTokens reports whether the prompt is encoded with special tokens.
// As in vLLM (tokenizer.VLLMVersion), a completion prompt gets them unless the
// request turns them off, and a rendered chat prompt does not unless the
// request turns them on (its template already writes them, so on means a
// second BOS).
func (r *Request) AddSpecialTokens() bool {
	switch r.SpecialTokens {
	case SpecialTokensOn:
		return true
	case SpecialTokensOff:
		return false
	}
	return r.Kind != KindChat
}
