package sim

import (
	"context"
	"fmt"
	"io"
)

// FinishLength is the finish reason of every simulated sequence: the
// simulator never samples an end-of-sequence token, so generation always
// stops at max_tokens.
const FinishLength = "length"

// Sequence is one admitted request holding a running slot of its Engine. The
// first token comes out of prefill; every later one costs one decode step.
// It is not safe for concurrent use; Close must be called exactly when the
// request ends (later calls do nothing).
type Sequence struct {
	engine    *Engine
	prompt    []int
	cached    int
	maxTokens int
	generated int
	gen       generator
	blocks    *seqBlocks // nil until prefill looked the prompt up
	closed    bool
}

// Next returns the next generated token, or io.EOF once MaxTokens tokens have
// been generated. It returns ctx's error if ctx ends during a decode step.
func (s *Sequence) Next(ctx context.Context) (Token, error) {
	if s.Done() {
		return Token{}, io.EOF
	}
	if s.generated > 0 {
		if err := sleep(ctx, s.engine.cost.decodePerToken); err != nil {
			return Token{}, fmt.Errorf("decoding token %d: %w", s.generated, err)
		}
	}
	s.generated++
	s.engine.metrics.generationTokens.Inc()
	return s.gen.next(), nil
}

// Done reports whether the sequence has generated all its tokens.
func (s *Sequence) Done() bool { return s.generated >= s.maxTokens }

// FinishReason is the OpenAI finish_reason for a sequence that is Done.
func (s *Sequence) FinishReason() string { return FinishLength }

// Usage reports the tokens counted so far.
func (s *Sequence) Usage() Usage {
	return Usage{PromptTokens: len(s.prompt), CompletionTokens: s.generated, CachedTokens: s.cached}
}

// Close releases the sequence's KV blocks (they stay cached) and gives the
// running slot back.
func (s *Sequence) Close() {
	if s.closed || s.engine == nil {
		return
	}
	s.closed = true
	if s.blocks != nil {
		s.engine.cache.release(s.blocks)
	}
	s.engine.release()
}
