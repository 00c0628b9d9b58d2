package extproc

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"fmt"
	"strings"

	"github.com/warmroute/warmroute/scorer"
)

type wireMessage struct {
	Role    jsontext.Value `json:"role"`
	Content jsontext.Value `json:"content"`
}

type wirePart struct {
	Type jsontext.Value `json:"type"`
	Text jsontext.Value `json:"text"`
}

func (w *wireRequest) readChat(req *scorer.Request) error {
	switch w.Messages.Kind() {
	case 0, 'n':
		return &fieldError{"messages", ErrEmptyMessages}
	case '[':
	default:
		return wrongType("messages", "a list of messages")
	}
	var raw []jsontext.Value
	if err := json.Unmarshal(w.Messages, &raw); err != nil {
		return wrongType("messages", "a list of messages")
	}
	if len(raw) == 0 {
		return &fieldError{"messages", ErrEmptyMessages}
	}
	req.Messages = make([]scorer.Message, len(raw))
	for i, m := range raw {
		if err := readMessage(m, i, &req.Messages[i]); err != nil {
			return err
		}
	}
	addGenerationPrompt := true // vLLM's default
	if err := optional(w.AddGenerationPrompt, "add_generation_prompt", "a boolean", &addGenerationPrompt); err != nil {
		return err
	}
	req.NoGenerationPrompt = !addGenerationPrompt
	req.GenerationPromptSent = addGenerationPrompt && !isNull(w.AddGenerationPrompt)
	if err := optional(w.ContinueFinalMessage, "continue_final_message", "a boolean", &req.ContinueFinalMessage); err != nil {
		return err
	}
	if err := optional(w.ChatTemplate, "chat_template", "a string", &req.ChatTemplate); err != nil {
		return err
	}
	if err := optional(w.ReasoningEffort, "reasoning_effort", "a string", &req.ReasoningEffort); err != nil {
		return err
	}
	var err error
	if req.Tools, err = rawOfKind(w.Tools, '[', "tools", "a list"); err != nil {
		return err
	}
	if req.Documents, err = rawOfKind(w.Documents, '[', "documents", "a list"); err != nil {
		return err
	}
	if k := w.ToolChoice.Kind(); k == '"' || k == '{' {
		req.ToolChoice = []byte(w.ToolChoice)
	}
	req.ChatTemplateKwargs, err = rawOfKind(w.ChatTemplateKwargs, '{', "chat_template_kwargs", "an object")
	return err
}

// rawOfKind returns v verbatim when it is of kind k, nil when it is absent or
// null, and an error otherwise.
func rawOfKind(v jsontext.Value, k jsontext.Kind, field, want string) ([]byte, error) {
	switch v.Kind() {
	case 0, 'n':
		return nil, nil
	case k:
		return v, nil
	default:
		return nil, wrongType(field, want)
	}
}

// Field names in errors are built only when an error occurs: a long chat
// would otherwise format one name per message and part.

func readMessage(raw jsontext.Value, i int, out *scorer.Message) error {
	field := func(suffix string) string { return fmt.Sprintf("messages[%d]%s", i, suffix) }
	var m wireMessage
	if raw.Kind() != '{' || json.Unmarshal(raw, &m, decodeOptions) != nil {
		return wrongType(field(""), "an object")
	}
	if m.Role.Kind() != '"' || json.Unmarshal(m.Role, &out.Role) != nil || out.Role == "" {
		return wrongType(field(".role"), "a non-empty string")
	}
	out.Raw = raw
	switch m.Content.Kind() {
	case 0, 'n':
		return nil
	case '"':
		if json.Unmarshal(m.Content, &out.Content) != nil {
			return wrongType(field(".content"), "a string or a list of content parts")
		}
		return nil
	case '[':
		return readParts(m.Content, field, out)
	default:
		return wrongType(field(".content"), "a string or a list of content parts")
	}
}

// readParts joins the non-empty text of a list content's text parts with
// "\n", as vLLM does when it flattens content for a string-format chat
// template; a bare string in the list is a text part, as vLLM accepts it.
// Other part types (images, audio) stay only in Message.Raw.
func readParts(v jsontext.Value, field func(string) string, out *scorer.Message) error {
	var parts []wirePart
	if json.Unmarshal(v, &parts, decodeOptions) != nil {
		return readMixedParts(v, field, out)
	}
	var sb strings.Builder
	for j := range parts {
		text, isText, err := parts[j].read(func(s string) string { return field(fmt.Sprintf(".content[%d]%s", j, s)) })
		if err != nil {
			return err
		}
		if isText {
			appendText(&sb, text)
		}
	}
	out.Content = sb.String()
	return nil
}

// appendText adds one part's text to the joined content; vLLM leaves empty
// texts out of the join.
func appendText(sb *strings.Builder, text string) {
	if text == "" {
		return
	}
	if sb.Len() > 0 {
		sb.WriteByte('\n')
	}
	sb.WriteString(text)
}

// readMixedParts reads a list that the fast path could not: one holding bare
// strings, or a part that is neither a string nor an object (named in the
// error).
func readMixedParts(v jsontext.Value, field func(string) string, out *scorer.Message) error {
	var raw []jsontext.Value
	if json.Unmarshal(v, &raw) != nil {
		return wrongType(field(".content"), "a list of content parts")
	}
	var sb strings.Builder
	for j, r := range raw {
		partField := func(s string) string { return field(fmt.Sprintf(".content[%d]%s", j, s)) }
		switch r.Kind() {
		case '"':
			var text string
			if json.Unmarshal(r, &text) != nil {
				return wrongType(partField(""), "a string or an object")
			}
			appendText(&sb, text)
			continue
		case '{':
		default:
			return wrongType(partField(""), "a string or an object")
		}
		var p wirePart
		if json.Unmarshal(r, &p, decodeOptions) != nil {
			return wrongType(partField(""), "an object")
		}
		text, isText, err := p.read(partField)
		if err != nil {
			return err
		}
		if isText {
			appendText(&sb, text)
		}
	}
	out.Content = sb.String()
	return nil
}

func (p *wirePart) read(field func(string) string) (text string, isText bool, err error) {
	var typ string
	if p.Type.Kind() != '"' || json.Unmarshal(p.Type, &typ) != nil {
		return "", false, wrongType(field(".type"), "a string")
	}
	if typ != "text" {
		return "", false, nil
	}
	if p.Text.Kind() != '"' || json.Unmarshal(p.Text, &text) != nil {
		return "", false, wrongType(field(".text"), "a string")
	}
	return text, true, nil
}
