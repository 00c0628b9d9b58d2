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

// flattenContents replaces each message's list content with the "\n"-joined
// text of its text parts, as vLLM does for string-format templates. Other
// part types carry no text for a text-only model and are dropped.
func flattenContents(msgs jinja.Value) {
	l := msgs.AsList()
	for i := range l.Len() {
		m := l.Get(i)
		if !m.IsDict() {
			continue
		}
		d := m.AsDict()
		c, ok := d.Get("content")
		if !ok || !c.IsList() {
			continue
		}
		d.Set("content", jinja.NewString(joinTextParts(c.AsList())))
	}
}

func joinTextParts(parts *jinja.List) string {
	var texts []string
	for i := range parts.Len() {
		p := parts.Get(i)
		if !p.IsDict() {
			continue
		}
		d := p.AsDict()
		if t, ok := d.Get("type"); ok && t.IsString() && t.AsString() != "text" {
			continue
		}
		if text, ok := d.Get("text"); ok && text.IsString() {
			texts = append(texts, text.AsString())
		}
	}
	return strings.Join(texts, "\n")
}
