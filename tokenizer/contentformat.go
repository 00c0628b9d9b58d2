package tokenizer

import (
	"fmt"
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
// template (VLLMVersion). vLLM reads every content as a list of parts: a
// string is one text part, a missing or null content none. A string-format
// template then gets the "\n"-joined non-empty texts ("" for none, so no
// template prints "None"); an OpenAI-format one gets the list, each text part
// as {"type": "text", "text": ...} followed by the part's fields vLLM does not
// know (cache_control, say), a bare string as such a part, except that a tool
// message whose parts are all text gets their texts joined. Media parts carry
// no text for the router (requests with media route on their text). A
// system message's leading billing-header line (x-anthropic-billing-header,
// which changes per request) is dropped, as vLLM drops it.
func normalizeContents(msgs jinja.Value, f ContentFormat) error {
	l := msgs.AsList()
	for i := range l.Len() {
		m := l.Get(i)
		if !m.IsDict() {
			continue
		}
		d := m.AsDict()
		parts, err := contentParts(d)
		if err != nil {
			return fmt.Errorf("decoding messages[%d].content: %w: %w", i, ErrRequest, err)
		}
		role := roleOf(m)
		if role == "system" {
			parts = stripBillingHeader(parts)
		}
		if f == ContentString {
			text, err := joinTextParts(parts)
			if err != nil {
				return fmt.Errorf("decoding messages[%d].content: %w: %w", i, ErrRequest, err)
			}
			d.Set("content", jinja.NewString(text))
			continue
		}
		wrapped, err := wrapParts(parts)
		if err != nil {
			return fmt.Errorf("decoding messages[%d].content: %w: %w", i, ErrRequest, err)
		}
		if role == "tool" {
			if text, ok := allText(wrapped); ok {
				d.Set("content", jinja.NewString(text))
				continue
			}
		}
		d.Set("content", jinja.NewList(wrapped))
	}
	return nil
}

func contentParts(d *jinja.Dict) ([]jinja.Value, error) {
	c, ok := d.Get("content")
	switch {
	case !ok || c.IsNone():
		return nil, nil
	case c.IsString():
		return []jinja.Value{c}, nil
	case c.IsList():
		return c.AsList().Items, nil
	}
	return nil, fmt.Errorf("neither a string nor a list")
}

// billingHeader starts the attribution line Claude Code puts in its system
// prompt.
const billingHeader = "x-anthropic-billing-header"

func stripBillingHeader(parts []jinja.Value) []jinja.Value {
	var out []jinja.Value
	for _, p := range parts {
		var text jinja.Value
		switch {
		case p.IsString():
			text = p
		case p.IsDict():
			if t, _ := p.AsDict().Get("type"); t.IsString() && t.AsString() == "text" {
				text, _ = p.AsDict().Get("text")
			}
		}
		if !text.IsString() || !strings.HasPrefix(text.AsString(), billingHeader) {
			out = append(out, p)
			continue
		}
		_, rest, _ := strings.Cut(text.AsString(), "\n")
		switch {
		case rest == "":
		case p.IsString():
			out = append(out, jinja.NewString(rest))
		default:
			out = append(out, withKey(p.AsDict(), "text", jinja.NewString(rest)))
		}
	}
	return out
}

// withKey copies d with key set to v (in place of the old value).
func withKey(d *jinja.Dict, key string, v jinja.Value) jinja.Value {
	out := jinja.NewDict()
	for _, k := range d.Keys {
		old, _ := d.Get(k)
		out.AsDict().Set(k, old)
	}
	out.AsDict().Set(key, v)
	return out
}

// textPartKeys maps the part types vLLM reads as text to the key holding it.
var textPartKeys = map[string]string{
	"text": "text", "input_text": "text", "output_text": "text",
	"refusal": "refusal", "thinking": "thinking",
}

// mediaPartTypes are the part types vLLM reads as media.
var mediaPartTypes = map[string]bool{
	"image_url": true, "input_image": true, "image_pil": true, "image_embeds": true,
	"audio_url": true, "input_audio": true, "audio_embeds": true,
	"video_url": true, "video_embeds": true, "prompt_embeds": true, "tool_reference": true,
}

// partKind reads a part: its text when it is a text part (ok false when its
// text is null: vLLM skips it), or isMedia for another part vLLM accepts.
func partKind(p jinja.Value) (text string, ok, isMedia bool, err error) {
	if p.IsString() {
		return p.AsString(), true, false, nil
	}
	if !p.IsDict() {
		return "", false, false, fmt.Errorf("a part is neither a string nor an object")
	}
	d := p.AsDict()
	t, hasType := d.Get("type")
	if !hasType || t.IsNone() {
		for k := range mediaPartTypes {
			if _, has := d.Get(k); has {
				return "", false, true, nil
			}
		}
		return "", false, false, fmt.Errorf("a part has no type")
	}
	if !t.IsString() {
		return "", false, false, fmt.Errorf("a part's type is not a string")
	}
	if key, isText := textPartKeys[t.AsString()]; isText {
		v, _ := d.Get(key)
		if v.IsString() {
			return v.AsString(), true, false, nil
		}
		return "", false, false, nil
	}
	if mediaPartTypes[t.AsString()] {
		return "", false, true, nil
	}
	return "", false, false, fmt.Errorf("unsupported part type %q", t.AsString())
}

func joinTextParts(parts []jinja.Value) (string, error) {
	var texts []string
	for _, p := range parts {
		text, ok, _, err := partKind(p)
		if err != nil {
			return "", err
		}
		if ok && text != "" {
			texts = append(texts, text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// knownPartFields are the content-part keys vLLM's request types declare;
// a text part keeps every other key when vLLM wraps it.
var knownPartFields = map[string]bool{
	"type": true, "text": true, "refusal": true, "thinking": true, "uuid": true,
	"image_url": true, "image_pil": true, "image_embeds": true, "input_audio": true,
	"audio_url": true, "audio_embeds": true, "video_url": true, "video_embeds": true,
	"prompt_embeds": true, "data": true, "name": true, "signature": true, "closed": true,
	"file": true, "detail": true,
}

func wrapParts(parts []jinja.Value) ([]jinja.Value, error) {
	out := []jinja.Value{}
	for _, p := range parts {
		text, ok, isMedia, err := partKind(p)
		switch {
		case err != nil:
			return nil, err
		case isMedia:
			out = append(out, p)
			continue
		case !ok:
			continue
		}
		w := jinja.NewDict()
		w.AsDict().Set("type", jinja.NewString("text"))
		w.AsDict().Set("text", jinja.NewString(text))
		if p.IsDict() {
			d := p.AsDict()
			for _, k := range d.Keys {
				if !knownPartFields[k] {
					v, _ := d.Get(k)
					w.AsDict().Set(k, v)
				}
			}
		}
		out = append(out, w)
	}
	return out, nil
}

// allText joins a tool message's parts when all are text parts, as vLLM
// hands tool results to templates as strings.
func allText(parts []jinja.Value) (string, bool) {
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		t, _ := p.AsDict().Get("type")
		if !t.IsString() || t.AsString() != "text" {
			return "", false
		}
		text, _ := p.AsDict().Get("text")
		texts = append(texts, text.AsString())
	}
	return strings.Join(texts, "\n"), true
}
