package openai

import json "encoding/json/v2"

// Chunk is one event of a streamed completion or chat completion: the
// members warmroute reads. A plain value.
type Chunk struct {
	Choices []ChunkChoice `json:"choices"`
	// Usage is set in the usage chunk (stream_options.include_usage) and nil
	// in the others.
	Usage *Usage `json:"usage"`
	// Error is set when the server ends a stream with an error event.
	Error *Error `json:"error,omitempty"`
}

// ChunkChoice is one choice of a chunk: Text for completions, Delta for chat
// completions.
type ChunkChoice struct {
	Text  string `json:"text,omitempty"`
	Delta *Delta `json:"delta,omitempty"`
}

// Delta is the new part of a chat completion's message.
type Delta struct {
	Content string `json:"content,omitempty"`
}

// Error is the error object of an OpenAI error response or error event.
type Error struct {
	Message string `json:"message"`
}

// HasContent reports whether any choice carries generated text.
func (c *Chunk) HasContent() bool {
	for _, ch := range c.Choices {
		if ch.Text != "" || ch.Delta != nil && ch.Delta.Content != "" {
			return true
		}
	}
	return false
}

// DecodeChunk reads one event's data as a chunk.
func DecodeChunk(data []byte) (Chunk, error) {
	var c Chunk
	err := json.Unmarshal(data, &c, decodeOptions)
	return c, err
}
