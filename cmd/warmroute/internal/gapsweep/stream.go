package gapsweep

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// maxStreamLine bounds one SSE line; completion chunks are small, so a
// longer line means a broken stream.
const maxStreamLine = 1 << 20

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

// chunk is the part of a completion or chat stream event read here.
type chunk struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		PromptTokensDetails *struct {
			CachedTokens *int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (c *chunk) content() bool {
	for _, ch := range c.Choices {
		if ch.Text != "" || ch.Delta.Content != "" {
			return true
		}
	}
	return false
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
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxStreamLine)
	for sc.Scan() {
		data, ok := strings.CutPrefix(strings.TrimSuffix(sc.Text(), "\r"), "data:")
		data = strings.TrimSpace(data)
		if !ok || data == "" || data == "[DONE]" {
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return out, fmt.Errorf("decoding stream event: %w: %w", ErrStream, err)
		}
		if c.Error != nil {
			return out, fmt.Errorf("stream error event %q: %w", c.Error.Message, ErrStream)
		}
		if out.firstContent.IsZero() && c.content() {
			out.firstContent = now()
		}
		if c.Usage != nil {
			out.usage = Usage{Known: true, Prompt: c.Usage.PromptTokens}
			if d := c.Usage.PromptTokensDetails; d != nil {
				out.usage.Cached = d.CachedTokens
			}
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("%w: %w", ErrStream, err)
	}
	return out, nil
}
