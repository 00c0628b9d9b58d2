package extproc

import (
	"encoding/json"

	"github.com/warmroute/warmroute/scorer"
	"github.com/warmroute/warmroute/tokenizer"
)

// keepHarmonyResponses keeps what vLLM 0.33's Harmony Responses path reads
// (input, instructions, tools, reasoning.effort): vLLM serves /v1/responses
// for a GPT-OSS model through Harmony messages built from the items
// themselves, not through the chat request the rest of this file builds,
// and a Harmony pool renders from these (tokenizer.HarmonyChat.RenderResponses).
func keepHarmonyResponses(w *wireResponses, req *scorer.Request) {
	req.HarmonyResponses = &tokenizer.HarmonyResponsesRequest{
		Input:           json.RawMessage(w.Input),
		Instructions:    json.RawMessage(w.Instructions),
		Tools:           json.RawMessage(w.Tools),
		ReasoningEffort: req.ReasoningEffort,
	}
}
