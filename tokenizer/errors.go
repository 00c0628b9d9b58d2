package tokenizer

import "errors"

var (
	// ErrUnsupported reports a tokenizer.json component (normalizer,
	// pre-tokenizer, regex pattern, model, post-processor or decoder) this
	// package cannot reproduce exactly. It is returned at load time.
	ErrUnsupported = errors.New("unsupported tokenizer component")
	// ErrMalformed reports a tokenizer.json or tokenizer_config.json that
	// cannot be decoded.
	ErrMalformed = errors.New("malformed tokenizer file")
	// ErrUnknownToken reports text that the model cannot represent: no
	// vocabulary entry, no byte fallback and no unknown token.
	ErrUnknownToken = errors.New("text has no token in the vocabulary")
	// ErrTemplate reports a chat template that failed to render, including
	// raise_exception calls from the template itself.
	ErrTemplate = errors.New("rendering chat template")
	// ErrRequest reports a chat request the engine's request models reject
	// (a tool without a name, a content part of an unknown type, tool-call
	// arguments that are not a string): vLLM answers it with a 400, so no
	// prompt exists to route on.
	ErrRequest = errors.New("request the engine rejects")
	// ErrRemote reports a failed call to an engine's /tokenize endpoint.
	ErrRemote = errors.New("calling remote tokenizer")
)

// ErrInvalidUTF8 reports input text that is not valid UTF-8; the reference
// only accepts valid strings.
var ErrInvalidUTF8 = errors.New("text is not valid UTF-8")
