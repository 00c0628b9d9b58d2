package scorer

import "fmt"

// An over-long prompt is routed on load, not rejected: the engine is the
// authority on what it accepts (vLLM's truncate_prompt_tokens makes a long
// prompt valid, and a remote or drifting tokenizer may count differently),
// and it answers an over-long prompt with its own 400 at no prefill cost.
// The router only refuses to spend work on keys no engine will cache.

// maxBytesPerToken bounds the average text bytes per token of a prompt that
// fits its pool's maxModelLen: English prose averages about 4.5 with the
// tokenizers this router supports, code and CJK fewer. A prompt with more
// bytes than maxModelLen times this is judged too long without tokenizing;
// the rare prompt that fits anyway (long runs of one character) is routed on
// load, which costs it cache affinity and nothing else.
const maxBytesPerToken = 8

// DefaultMaxTokenizeBytes is the most prompt text a pool without maxModelLen
// tokenizes per request: about 250,000 tokens of English, and at most about
// half a second of one core for text built to be expensive (one long
// "word" costs far more per byte than prose).
const DefaultMaxTokenizeBytes = 1 << 20

// promptLimit is a pool's bound on tokenizer work per request. The zero
// value (a pool discovery created) is the bound of an unknown maxModelLen.
type promptLimit struct {
	maxTokens int // 0: not known
	maxBytes  int // 0: DefaultMaxTokenizeBytes
}

func newPromptLimit(maxModelLen int) promptLimit {
	if maxModelLen <= 0 {
		return promptLimit{}
	}
	return promptLimit{maxTokens: maxModelLen, maxBytes: maxModelLen * maxBytesPerToken}
}

// checkBytes rejects, before any tokenizer work, a prompt whose text is
// larger than the limit allows.
func (l promptLimit) checkBytes(req *Request) error {
	limit := l.maxBytes
	if limit == 0 {
		limit = DefaultMaxTokenizeBytes
	}
	if n := promptBytes(req); n > limit {
		return fmt.Errorf("%w: %d bytes of prompt text, the limit is %d", ErrPromptTooLong, n, limit)
	}
	return nil
}

// checkTokens rejects a tokenized prompt longer than the engine accepts.
func (l promptLimit) checkTokens(n int) error {
	if l.maxTokens > 0 && n > l.maxTokens {
		return fmt.Errorf("%w: %d tokens, maxModelLen is %d", ErrPromptTooLong, n, l.maxTokens)
	}
	return nil
}

// promptBytes is the size of the text a request's tokenization starts from:
// the first completion prompt (token ids are not text), or the chat messages'
// text and tools, which the template renders with little more around them.
func promptBytes(req *Request) int {
	if req.Kind == KindChat {
		n := len(req.Tools)
		for _, m := range req.Messages {
			n += len(m.Content)
		}
		return n
	}
	text, _, _ := firstPrompt(req)
	return len(text)
}
