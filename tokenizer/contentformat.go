package tokenizer

import (
	"regexp"
	"strings"

	"github.com/ardanlabs/jinja"
)

// ContentFormat says how a chat template expects a message's content: as a
// plain string, or as the OpenAI list of typed parts.
type ContentFormat int

const (
	// ContentString templates read content as text: vLLM joins the text
	// parts of a list content with "\n" before rendering.
	ContentString ContentFormat = iota
	// ContentOpenAI templates iterate over the parts themselves, so a list
	// content is passed through unchanged.
	ContentOpenAI
)

// These find, in a template's source, a loop over a message's content, either
// directly ("for part in message['content']") or through a variable set from
// it ("set c = message.content" then "for part in c"). vLLM decides the
// content format from the same two shapes on the template's syntax tree; the
// Jinja library used here exposes no tree, so the statements are matched as
// text. That agrees with vLLM on the supported families' templates (tested);
// a template that loops over content in another shape (through a filter, say)
// can be forced with WithContentFormat.
var (
	contentExpr     = `\w+\s*(?:\[\s*['"]content['"]\s*\]|\.content)`
	loopOverContent = regexp.MustCompile(`\{%-?\s*for\s+[\w\s,]+\s+in\s+` + contentExpr + `\s*-?%\}`)
	setFromContent  = regexp.MustCompile(`\{%-?\s*set\s+(\w+)\s*=\s*` + contentExpr + `\s*-?%\}`)
)

// DetectContentFormat reports whether the template iterates over message
// content (ContentOpenAI) or reads it as a string (ContentString), as vLLM's
// "auto" chat-template content format does.
func DetectContentFormat(src string) ContentFormat {
	if loopOverContent.MatchString(src) {
		return ContentOpenAI
	}
	for _, m := range setFromContent.FindAllStringSubmatch(src, -1) {
		loop := regexp.MustCompile(`\{%-?\s*for\s+[\w\s,]+\s+in\s+` + regexp.QuoteMeta(m[1]) + `\s*-?%\}`)
		if loop.MatchString(src) {
			return ContentOpenAI
		}
	}
	return ContentString
}

// normalizeContents gives each message the content vLLM passes to the
// template (VLLMVersion). A missing or null content (an assistant turn that
// only calls tools) is empty: "" for a string-format template, [] for an
// OpenAI-format one, so no template prints "None" or takes a branch for a
// missing value. A string-format template gets a list content as the
// "\n"-joined non-empty text of its text parts, a bare string counting as a
// text part; an OpenAI-format template gets each bare string in a list as a
// {"type": "text", "text": ...} part. Other part types carry no text for a
// text-only model and are dropped from the joined text.
func normalizeContents(msgs jinja.Value, f ContentFormat) {
	l := msgs.AsList()
	for i := range l.Len() {
		m := l.Get(i)
		if !m.IsDict() {
			continue
		}
		d := m.AsDict()
		c, ok := d.Get("content")
		switch {
		case (!ok || c.IsNone()) && f == ContentString:
			d.Set("content", jinja.NewString(""))
		case !ok || c.IsNone():
			d.Set("content", jinja.NewList([]jinja.Value{}))
		case c.IsList() && f == ContentString:
			d.Set("content", jinja.NewString(joinTextParts(c.AsList())))
		case c.IsList():
			wrapStringParts(c.AsList())
		}
	}
}

// textPartKeys maps the part types vLLM reads as text to the key holding it.
var textPartKeys = map[string]string{
	"text": "text", "input_text": "text", "output_text": "text",
	"refusal": "refusal", "thinking": "thinking",
}

func joinTextParts(parts *jinja.List) string {
	var texts []string
	for i := range parts.Len() {
		if text := partText(parts.Get(i)); text != "" {
			texts = append(texts, text)
		}
	}
	return strings.Join(texts, "\n")
}

// partText is the text a content part contributes, "" for none. A part
// without a type is read as text, as before vLLM rejects it.
func partText(p jinja.Value) string {
	if p.IsString() {
		return p.AsString()
	}
	if !p.IsDict() {
		return ""
	}
	d := p.AsDict()
	key := "text"
	if t, ok := d.Get("type"); ok {
		if key, ok = textPartKeys[t.AsString()]; !t.IsString() || !ok {
			return ""
		}
	}
	if text, ok := d.Get(key); ok && text.IsString() {
		return text.AsString()
	}
	return ""
}

func wrapStringParts(parts *jinja.List) {
	for i, p := range parts.Items {
		if p.IsString() {
			d := jinja.NewDict()
			d.AsDict().Set("type", jinja.NewString("text"))
			d.AsDict().Set("text", p)
			parts.Items[i] = d
		}
	}
}
