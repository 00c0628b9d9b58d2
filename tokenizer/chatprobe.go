package tokenizer

import (
	"encoding/json"
	"regexp"

	"github.com/ardanlabs/jinja"
)

// Probes of a chat template that vLLM's /v1/messages serving runs once per
// served template, mirrored so the router renders what the engine renders.

// probeInlineSystem is the conversation vLLM renders to learn whether a
// template accepts a system message after the first.
const probeInlineSystem = `[{"role":"system","content":"t"},{"role":"user","content":"t"},` +
	`{"role":"system","content":"t"},{"role":"user","content":"t"}]`

// anthropicEfforts are the efforts vLLM compares "none" against (its
// AnthropicEffort values, in order).
var anthropicEfforts = []string{"low", "medium", "high", "xhigh", "max"}

// SystemFirst reports whether the template, or its "tool_use" variant,
// fails to render a system message after the first, as vLLM's probe
// decides: it renders system, user, system, user with nothing else in the
// context (no special tokens, no tools, add_generation_prompt false), and
// any error means the template wants inline system messages merged into the
// leading one. Computed once.
//
// vLLM's probe runs Jinja2, where an undefined name fails as an operand of
// "+", or when its attribute, item or call is taken; the Jinja library used
// here renders those leniently. So a template whose source uses a special
// token (bos_token, eos_token: absent from the probe's context) that way
// fails the probe too (Llama 3's "bos_token + content"). The source is
// matched as text, as DetectContentFormat does; the probe results agree with
// vLLM's on the supported families (tested).
func (c *ChatTemplate) SystemFirst() bool {
	c.probe.Do(c.runProbes)
	if t, ok := c.named["tool_use"]; ok {
		t.probe.Do(t.runProbes)
		return c.systemFirst || t.systemFirst
	}
	return c.systemFirst
}

// DisabledThinkingEffort is the reasoning_effort vLLM's /v1/messages uses
// for thinking disabled: "none", or "low" when the default template fails to
// render a user "Hi" with effort "none" or renders it as it renders one of
// the thinking efforts (the template ignores "none"). Computed once.
func (c *ChatTemplate) DisabledThinkingEffort() string {
	c.probe.Do(c.runProbes)
	return c.disabledEffort
}

// strictTokenUse finds a special token used where Jinja2 raises for an
// undefined name.
var strictTokenUse = regexp.MustCompile(`\+\s*(?:bos|eos)_token\b|\b(?:bos|eos)_token\s*(?:\+|\.\w|\[|\()`)

func (c *ChatTemplate) runProbes() {
	c.systemFirst = c.rendersBare(probeInlineSystem) != nil || strictTokenUse.MatchString(c.src)
	c.disabledEffort = c.probeDisabledEffort()
}

// rendersBare renders messages with only add_generation_prompt (false) in
// the context, as vLLM's bare Jinja probe does.
func (c *ChatTemplate) rendersBare(messages string) error {
	raw := json.RawMessage(messages)
	msgs, err := newBigInts(raw).decode(raw)
	if err != nil {
		return err
	}
	_, err = c.tmpl.RenderValues(map[string]jinja.Value{"messages": msgs, "add_generation_prompt": jinja.NewBool(false)})
	return err
}

func (c *ChatTemplate) probeDisabledEffort() string {
	render := func(effort string) (string, error) {
		return c.Render(ChatRequest{Messages: json.RawMessage(`[{"role":"user","content":"Hi"}]`),
			AddGenerationPrompt: true, ReasoningEffort: effort})
	}
	none, err := render("none")
	if err != nil {
		return "low"
	}
	for _, e := range anthropicEfforts {
		if text, err := render(e); err == nil && text == none {
			return "low"
		}
	}
	return "none"
}
