package scorer

import "errors"

// Errors returned by Pick and by the tokenization stage. Callers match them
// with errors.Is.
var (
	// ErrUnknownModel means no pool serves the request's model and no default
	// pool is configured.
	ErrUnknownModel = errors.New("unknown model")
	// ErrNoEndpoint means the pool (after the subset hint) has no eligible endpoint.
	ErrNoEndpoint = errors.New("no eligible endpoint")
	// ErrSaturated means every candidate's engine reports at least
	// scoring.shedWaiting waiting requests: the request is shed (429).
	ErrSaturated = errors.New("every candidate endpoint is saturated")
	// ErrNoChatTemplate means a chat request reached a pool whose tokenizer
	// has no chat template; the request is routed on load.
	ErrNoChatTemplate = errors.New("tokenizer has no chat template")
	// ErrNoRawMessage means a chat message lacks its raw JSON, which the
	// template needs to see every field.
	ErrNoRawMessage = errors.New("chat message has no raw JSON")
	// ErrBadTokenID means a caller-given prompt token id is out of range.
	ErrBadTokenID = errors.New("prompt token id out of range")
	// ErrPromptTooLong means a prompt exceeds its pool's maxModelLen, or
	// its text the bytes the router tokenizes per request; the request is
	// routed on load.
	ErrPromptTooLong = errors.New("prompt too long to tokenize")
	// ErrTokenizerConfig means a pool's tokenizer could not be set up.
	ErrTokenizerConfig = errors.New("configuring pool tokenizer")
)
