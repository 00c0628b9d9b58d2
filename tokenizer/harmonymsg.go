package tokenizer

import (
	"fmt"
	"strings"
)

// HarmonyPrompt is a rendered Harmony prompt: its special tokens and texts
// in order. openai_harmony encodes each text on its own and reads no special
// token inside one (text typed into a message that looks like <|end|> is
// plain text), so ids never merge across a text's ends; encode it with
// Tokenizer.AppendHarmony.
type HarmonyPrompt struct {
	parts []harmonyPart
}

type harmonyPart struct {
	text    string
	special bool
}

// String is the prompt's text, special tokens written out.
func (p *HarmonyPrompt) String() string {
	var b strings.Builder
	for _, pt := range p.parts {
		b.WriteString(pt.text)
	}
	return b.String()
}

func (p *HarmonyPrompt) special(s string) {
	p.parts = append(p.parts, harmonyPart{text: s, special: true})
}

func (p *HarmonyPrompt) text(s string) {
	if s != "" {
		p.parts = append(p.parts, harmonyPart{text: s})
	}
}

// AppendHarmony appends the ids of a Harmony prompt: each special token's
// id, and each text encoded without recognising added tokens in it (as
// tiktoken's encode_ordinary does).
func (t *Tokenizer) AppendHarmony(dst []uint32, p *HarmonyPrompt) ([]uint32, error) {
	st := t.states.Get().(*encodeState)
	st.scratch.longBytes = 0
	defer t.states.Put(st)
	var err error
	for _, pt := range p.parts {
		if pt.special {
			id, ok := t.addedID(pt.text)
			if !ok {
				return dst, fmt.Errorf("encoding harmony: %q is not in the vocabulary: %w", pt.text, ErrUnsupported)
			}
			dst = append(dst, id)
			continue
		}
		if dst, err = t.encodePiece(dst, pt.text, st); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

func (t *Tokenizer) addedID(content string) (uint32, bool) {
	id, ok := t.addedIDs[content]
	return id, ok
}

// harmonySystem is openai_harmony's SystemContent as vLLM sets it.
type harmonySystem struct {
	date, effort string
}

// harmonyDeveloper is its DeveloperContent: instructions (nil: none) and
// the functions namespace.
type harmonyDeveloper struct {
	instructions *string
	tools        []harmonyTool
}

// harmonyMessage is one openai_harmony Message.
type harmonyMessage struct {
	role, name                      string // name: the author's (a tool's name)
	recipient, channel, contentType string
	texts                           []string // TextContent parts
	system                          *harmonySystem
	developer                       *harmonyDeveloper
}

func textMessage(role, channel string, texts ...string) harmonyMessage {
	return harmonyMessage{role: role, channel: channel, texts: texts}
}

func developerMessage(instructions *string, tools []harmonyTool) harmonyMessage {
	return harmonyMessage{role: "developer", developer: &harmonyDeveloper{instructions: instructions, tools: tools}}
}

// harmonyRender is vLLM's render_for_completion: analysis messages before
// the last final answer dropped, each message rendered, the assistant's
// header appended.
func harmonyRender(msgs []harmonyMessage) *HarmonyPrompt {
	last := -1
	tools := false
	for i, m := range msgs {
		if m.role == "assistant" && m.channel == "final" {
			last = i
		}
		if m.developer != nil && len(m.developer.tools) > 0 {
			tools = true
		}
	}
	p := &HarmonyPrompt{}
	for i, m := range msgs {
		if i < last && m.channel == "analysis" {
			continue
		}
		m.render(p, tools)
	}
	p.special("<|start|>")
	p.text("assistant")
	return p
}

// render is openai_harmony's rendering of one message, with the assistant
// tool-call header vLLM rewrites back to the older form
// ("assistant to=R<|channel|>commentary json").
func (m harmonyMessage) render(p *HarmonyPrompt, functionTools bool) {
	p.special("<|start|>")
	toTool := m.role == "assistant" && m.recipient != "" && m.contentType != "" && m.channel != ""
	switch {
	case toTool:
		p.text("assistant to=" + m.recipient)
		p.special("<|channel|>")
		p.text(m.channel + " " + m.contentType)
	default:
		if m.role == "tool" {
			p.text(m.name)
		} else {
			p.text(m.role)
			if m.name != "" {
				p.text(":" + m.name)
			}
		}
		if m.channel != "" {
			p.special("<|channel|>")
			p.text(m.channel)
		}
		if m.recipient != "" && m.recipient != "all" {
			p.text(" to=" + m.recipient)
		}
		if m.contentType != "" {
			p.text(" " + m.contentType)
		}
	}
	p.special("<|message|>")
	switch {
	case m.system != nil:
		p.text(m.system.render(functionTools))
	case m.developer != nil:
		p.text(m.developer.render())
	}
	for _, t := range m.texts {
		p.text(t)
	}
	if m.role == "assistant" && m.recipient != "" {
		p.special("<|call|>")
	} else {
		p.special("<|end|>")
	}
}

func (s *harmonySystem) render(functionTools bool) string {
	out := "You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\nCurrent date: " +
		s.date + "\n\nReasoning: " + s.effort +
		"\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message."
	if functionTools {
		out += "\nCalls to these tools must go to the commentary channel: 'functions'."
	}
	return out
}

func (d *harmonyDeveloper) render() string {
	var sections []string
	if d.instructions != nil {
		sections = append(sections, "# Instructions", *d.instructions)
	}
	if len(d.tools) > 0 {
		sections = append(sections, harmonyToolsSection(d.tools))
	}
	return strings.Join(sections, "\n\n")
}

// harmonyPreamble is vLLM's build_harmony_preamble: the system message, and
// a developer message when there are instructions (non-empty) or tools.
func harmonyPreamble(date, effort string, instructions *string, tools []harmonyTool) []harmonyMessage {
	msgs := []harmonyMessage{{role: "system", system: &harmonySystem{date: date, effort: effort}}}
	if (instructions != nil && *instructions != "") || len(tools) > 0 {
		msgs = append(msgs, developerMessage(instructions, tools))
	}
	return msgs
}
