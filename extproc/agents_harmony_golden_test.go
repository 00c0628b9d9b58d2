package extproc

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/warmroute/warmroute/scorer"
	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// agentsHarmonyGolden is testdata/agents_harmony_golden.json, written by
// testdata/gen_agents_harmony.py: the prompt ids vLLM's own code computes
// for /v1/responses (its Harmony Responses path) and /v1/messages (the
// Anthropic conversion, then Harmony chat) on a GPT-OSS model.
type agentsHarmonyGolden struct {
	VLLMVersion string                       `json:"vllm_version"`
	HarmonyDate string                       `json:"harmony_start_date"`
	Responses   map[string]agentsHarmonyCase `json:"responses"`
	Messages    map[string]agentsHarmonyCase `json:"messages"`
}

type agentsHarmonyCase struct {
	Body  json.RawMessage `json:"body"`
	IDs   []uint32        `json:"ids"`
	Error string          `json:"error"`
}

// TestAgentsHarmonyGolden parses each body as the router does and encodes
// it with a GPT-OSS pool's local tokens: the ids must equal vLLM's, and a
// body vLLM rejects must not get ids.
func TestAgentsHarmonyGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/agents_harmony_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g agentsHarmonyGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if g.VLLMVersion != tokenizer.VLLMVersion {
		t.Fatalf("golden from vLLM %s, the router mirrors %s", g.VLLMVersion, tokenizer.VLLMVersion)
	}
	if len(g.Responses) < 20 {
		t.Fatalf("golden has %d Responses shapes, want at least 20", len(g.Responses))
	}
	tk, err := tokenizer.LoadDir(tokenizertest.Dir(t, "gptoss"))
	if err != nil {
		t.Fatal(err)
	}
	local := scorer.NewLocalTokens(tk, scorer.WithHarmonyDate(func() string { return g.HarmonyDate }))
	for _, api := range []struct {
		path  string
		cases map[string]agentsHarmonyCase
	}{{pathResponses, g.Responses}, {pathMessages, g.Messages}} {
		for name, c := range api.cases {
			t.Run(api.path+"/"+name, func(t *testing.T) {
				var got []uint32
				req, _, err := parseRequest(api.path, c.Body)
				if err == nil {
					got, err = local.Tokens(context.Background(), req, nil)
				}
				compareGoldenIDs(t, got, err, c.IDs, c.Error)
			})
		}
	}
}
