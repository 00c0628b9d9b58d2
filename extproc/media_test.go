package extproc

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/scorer"
)

// TestMediaRoutesOnPrefix: a chat request with an image gets the ids of the
// conversation before the message holding it, ending at an added token (a
// prefix of what vLLM computes), never the ids of its text with the image
// left out, which a text-only request would share.
func TestMediaRoutesOnPrefix(t *testing.T) {
	const conv = `{"model":"m","messages":[{"role":"system","content":"You are terse."},` +
		`{"role":"user","content":"Earlier question"},{"role":"assistant","content":"Earlier answer"},` +
		`{"role":"user","content":CONTENT}]}`
	body := func(content string) []byte { return []byte(strings.Replace(conv, "CONTENT", content, 1)) }
	// The added token each family's user turn starts with (or ends its
	// header with): the media prefix ends there, not on the header text
	// after it, whose ids the next text may change.
	lastAdded := map[string]string{"qwen3": "<|im_start|>", "llama3": "<|end_header_id|>", "gemma3": "\n"} // Gemma 3 has "\n" as an added token
	for fam, last := range lastAdded {
		t.Run(fam, func(t *testing.T) {
			tk := goldenTokenizer(t, fam)
			local := scorer.NewLocalTokens(tk)
			tokens := func(b []byte) []uint32 {
				t.Helper()
				req, err := ParseRequest(pathChatCompletions, b)
				if err != nil {
					t.Fatal(err)
				}
				ids, err := local.Tokens(context.Background(), req, nil)
				if err != nil {
					t.Fatal(err)
				}
				return ids
			}
			media := tokens(body(`[{"type":"text","text":"What is in it?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]`))
			text := tokens(body(`"What is in it?"`))
			if len(media) == 0 || len(media) >= len(text) || !slices.Equal(media, text[:len(media)]) {
				t.Fatalf("media request ids (%d) are not a proper prefix of the text request's (%d)", len(media), len(text))
			}
			if got, err := tk.Decode(media[len(media)-1:], false); err != nil || got != last {
				t.Fatalf("media request ids end with %q (%v), want %q", got, err, last)
			}
		})
	}
}
