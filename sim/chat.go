package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  json.RawMessage `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

// contentPart is one element of a message's content list.
type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// flattenChat renders messages (and tool definitions) into one prompt text
// the way a chat template would: a role marker, the content, a separator, and
// a final assistant marker as the generation prompt. It is deterministic, so
// equal conversations count equal tokens and share prefixes the way a real
// template makes them share KV blocks. JSON fragments are compacted so
// formatting does not change the prompt.
func flattenChat(messages []chatMessage, tools json.RawMessage) (string, error) {
	if len(messages) == 0 {
		return "", fmt.Errorf("%w: messages must not be empty", ErrEmptyPrompt)
	}
	var b strings.Builder
	if err := writeJSONSection(&b, "tools", tools); err != nil {
		return "", err
	}
	for i, m := range messages {
		if err := writeMessage(&b, m); err != nil {
			return "", fmt.Errorf("messages[%d]: %w", i, err)
		}
	}
	b.WriteString("<|assistant|>\n")
	return b.String(), nil
}

func writeMessage(b *strings.Builder, m chatMessage) error {
	if m.Role == "" {
		return fmt.Errorf("%w: role is required", ErrInvalidRequest)
	}
	b.WriteString("<|" + m.Role + "|>")
	if m.Name != "" {
		b.WriteString(" " + m.Name)
	}
	if m.ToolCallID != "" {
		b.WriteString(" " + m.ToolCallID)
	}
	b.WriteByte('\n')
	if err := writeContent(b, m.Content); err != nil {
		return err
	}
	if err := writeJSONSection(b, "tool_calls", m.ToolCalls); err != nil {
		return err
	}
	b.WriteByte('\n')
	return nil
}

// writeContent accepts a string, null, or a list of parts; text parts are
// written as is and other parts (images, audio) as a "<type>" placeholder.
func writeContent(b *strings.Builder, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		b.WriteString(text)
		return nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return fmt.Errorf("%w: content must be a string or a list of parts: %w", ErrMalformedJSON, err)
	}
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
			continue
		}
		b.WriteString("<" + p.Type + ">")
	}
	return nil
}

func writeJSONSection(b *strings.Builder, name string, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return fmt.Errorf("%w: compacting %s: %w", ErrMalformedJSON, name, err)
	}
	b.WriteString("<|" + name + "|>")
	b.Write(compact.Bytes())
	b.WriteByte('\n')
	return nil
}
