package tokenizer

// harmonyTokens are the Harmony format's message-framing tokens, present in
// GPT-OSS's vocabulary.
var harmonyTokens = []string{"<|start|>", "<|channel|>", "<|message|>"}

// Harmony reports whether the vocabulary is a Harmony one (GPT-OSS). vLLM
// renders chat for these models with its Harmony encoder, not with the chat
// template in the tokenizer files (it decides on the model type, gpt_oss;
// the router, which may not see the model's config.json, decides on these
// tokens), so a local render of the template would not give the engine's
// tokens.
func (t *Tokenizer) Harmony() bool {
	found := 0
	for _, a := range t.added {
		for _, h := range harmonyTokens {
			if a.Content == h {
				found++
			}
		}
	}
	return found == len(harmonyTokens)
}
