package gapsweep

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/warmroute/warmroute/openai"
)

// Usage is the token accounting a response reported. Cached is nil when the
// server did not report prompt_tokens_details.cached_tokens.
type Usage struct {
	Known  bool `json:"known"`
	Prompt int  `json:"promptTokens"`
	Cached *int `json:"cachedTokens"`
}

// Uncached is the prompt tokens the engine had to prefill, or nil when
// unknown.
func (u Usage) Uncached() *int {
	if !u.Known || u.Cached == nil {
		return nil
	}
	n := max(u.Prompt-*u.Cached, 0)
	return &n
}

// streamReading is what readStream learned; firstContent is zero when no
// content chunk arrived.
type streamReading struct {
	firstContent time.Time
	usage        Usage
}

// readStream reads an OpenAI event stream to its end, noting when the first
// chunk with content arrived (by now) and the usage chunk. An error event
// ends it with an error.
func readStream(r io.Reader, now func() time.Time) (streamReading, error) {
	var out streamReading
	events := openai.NewEventReader(r, openai.DefaultLimit)
	for {
		data, err := events.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("%w: %w", ErrStream, err)
		}
		if len(data) == 0 || openai.IsDone(data) {
			continue
		}
		c, err := openai.DecodeChunk(data)
		if err != nil {
			return out, fmt.Errorf("decoding stream event: %w: %w", ErrStream, err)
		}
		if c.Error != nil {
			return out, fmt.Errorf("stream error event %q: %w", c.Error.Message, ErrStream)
		}
		if out.firstContent.IsZero() && c.HasContent() {
			out.firstContent = now()
		}
		if c.Usage != nil {
			out.usage = Usage{Known: true, Prompt: c.Usage.Prompt(), Cached: c.Usage.Cached()}
		}
	}
}
