package tokenizer

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/ardanlabs/jinja"
)

// continueTag marks where the final message's text ends, as transformers
// (the version VLLMVersion pins) marks it for continue_final_message: the
// tag is appended to that text, the chat rendered, and the render cut at the
// tag's last occurrence.
const continueTag = "CONTINUE_FINAL_MESSAGE_TAG "

// tagFinalMessage appends continueTag to the last message's text (the last
// text part of a list content) and returns the text as it was.
func tagFinalMessage(msgs jinja.Value) (string, error) {
	l := msgs.AsList()
	if l.Len() == 0 {
		return "", fmt.Errorf("rendering chat: continue_final_message with no messages: %w", ErrTemplate)
	}
	last := l.Get(l.Len() - 1)
	if !last.IsDict() {
		return "", fmt.Errorf("rendering chat: continue_final_message: the final message is not an object: %w", ErrTemplate)
	}
	d := last.AsDict()
	c, _ := d.Get("content")
	switch {
	case c.IsString():
		d.Set("content", jinja.NewString(c.AsString()+continueTag))
		return c.AsString(), nil
	case c.IsList():
		parts := c.AsList().Items
		for i := len(parts) - 1; i >= 0; i-- {
			if !parts[i].IsDict() {
				continue
			}
			p := parts[i].AsDict()
			if text, ok := p.Get("text"); ok && text.IsString() {
				p.Set("text", jinja.NewString(text.AsString()+continueTag))
				return text.AsString(), nil
			}
		}
	}
	return "", fmt.Errorf("rendering chat: continue_final_message: the final message has no text to continue: %w", ErrTemplate)
}

// cutAtFinalMessage ends the render where the final message's text ends. A
// template that trims the message's trailing space also trims the tag's, so
// the cut then drops trailing space too, as transformers does.
func cutAtFinalMessage(out, final string) (string, error) {
	tag := strings.TrimSpace(continueTag)
	at := strings.LastIndex(out, tag)
	if at < 0 || !strings.Contains(out, strings.TrimSpace(final)) {
		return "", fmt.Errorf("rendering chat: continue_final_message: the template does not render the final message: %w", ErrTemplate)
	}
	if strings.HasPrefix(out[at:], continueTag) {
		return out[:at], nil
	}
	return strings.TrimRightFunc(out[:at], isPySpace), nil
}

// isPySpace is Python's str.isspace for one character: Go's white space plus
// the four information separators U+001C..U+001F.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}
