package tokenizer

import (
	"fmt"
	"strings"
)

// Decode turns ids back into text through the tokenizer's decoder chain.
// With skipSpecial, special added tokens are left out.
func (t *Tokenizer) Decode(ids []uint32, skipSpecial bool) (string, error) {
	if t.decErr != nil {
		return "", fmt.Errorf("decoding ids: %w", t.decErr)
	}
	toks := make([]string, 0, len(ids))
	for _, id := range ids {
		if a, ok := t.added[id]; ok {
			if !(skipSpecial && a.Special) {
				toks = append(toks, a.Content)
			}
			continue
		}
		if int(id) >= len(t.names) {
			return "", fmt.Errorf("decoding id %d: %w", id, ErrUnknownToken)
		}
		toks = append(toks, t.names[id])
	}
	for _, step := range t.dec {
		toks = step(toks)
	}
	return strings.Join(toks, ""), nil
}
