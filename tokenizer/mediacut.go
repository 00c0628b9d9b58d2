package tokenizer

import (
	"fmt"
	"strings"

	"github.com/ardanlabs/jinja"
)

// A request with media (an image, audio or video part, embeddings) gets ids
// from vLLM that the router cannot reproduce: vLLM expands each item into
// placeholder tokens whose blocks it keys by the item's hash. For a
// string-format template it also writes the placeholders at the start of the
// message's text, before the message's own text parts. So the router renders
// such a request only up to where the first message holding media starts its
// content: everything before it is what vLLM renders too. The message's
// content becomes mediaTag, the render is cut where the tag starts, and the
// encoder drops the ids after the render's last added token (ChatPrompt's
// MediaCut), whose tokenization the text that followed in vLLM's prompt could
// have changed. Requests with media thus route on the prefix before it.
const mediaTag = "WARMROUTE_MEDIA_CUT"

// firstMediaMessage returns the index of the first message with a media
// part in its content list, or -1.
func firstMediaMessage(msgs jinja.Value) int {
	for i, m := range msgs.AsList().Items {
		if !m.IsDict() {
			continue
		}
		c, _ := m.AsDict().Get("content")
		if !c.IsList() {
			continue
		}
		for _, p := range c.AsList().Items {
			if _, _, isMedia, err := partKind(p); err == nil && isMedia {
				return i
			}
		}
	}
	return -1
}

// tagMediaMessage makes message i's content mediaTag (a text part for a
// template that loops over parts). A system or developer message with media
// is refused: templates move those, so no prefix of the render is known to
// precede it.
func tagMediaMessage(msgs jinja.Value, i int, f ContentFormat) error {
	m := msgs.AsList().Get(i)
	switch role := roleOf(m); role {
	case "system", "developer":
		return fmt.Errorf("rendering chat: media in a %s message: %w", role, ErrUnsupported)
	}
	content := jinja.NewString(mediaTag)
	if f != ContentString {
		part := jinja.NewDict()
		part.AsDict().Set("type", jinja.NewString("text"))
		part.AsDict().Set("text", jinja.NewString(mediaTag))
		content = jinja.NewList([]jinja.Value{part})
	}
	m.AsDict().Set("content", content)
	return nil
}

// cutAtMedia ends the render where the tagged message's content starts.
func cutAtMedia(out string) (string, error) {
	at := strings.Index(out, mediaTag)
	if at < 0 {
		return "", fmt.Errorf("rendering chat: the template does not render the message with media: %w", ErrUnsupported)
	}
	return out[:at], nil
}

// TrimToAdded drops the ids after the last added token (special or not)
// among ids[from:], or all of them when there is none: text before an added
// token encodes the same whatever follows it, text after one may not.
func (t *Tokenizer) TrimToAdded(ids []uint32, from int) []uint32 {
	for i := len(ids) - 1; i >= from; i-- {
		if _, ok := t.added[ids[i]]; ok {
			return ids[:i+1]
		}
	}
	return ids[:from]
}
