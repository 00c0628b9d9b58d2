package extproc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/warmroute/warmroute/scorer"
	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

type goldenTokens struct {
	IDs   []uint32 `json:"ids"`
	Error string   `json:"error"`
}

// TestAgentTokensGolden renders each converted agent request with the
// router's tokenizer and compares the ids with those vLLM's own renderer made
// of vLLM's conversion (gen_agents.py): the prompt the router keys is the
// prompt the engine caches. Mismatches are listed per family and shape.
func TestAgentTokensGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/agents_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Families      []string                                            `json:"families"`
		ProbeFamilies []string                                            `json:"probe_families"`
		Responses     map[string]struct{ Tokens map[string]goldenTokens } `json:"responses"`
		Messages      map[string]struct{ Tokens map[string]goldenTokens } `json:"messages"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Families) == 0 {
		t.Fatal("the golden file renders no family")
	}
	raw := loadAgentsGolden(t)
	for _, fam := range append(g.Families, g.ProbeFamilies...) {
		full := slices.Contains(g.Families, fam)
		t.Run(fam, func(t *testing.T) {
			tk, err := tokenizer.LoadDir(tokenizertest.Dir(t, fam))
			if err != nil {
				t.Fatal(err)
			}
			lt := scorer.NewLocalTokens(tk)
			n := 0
			for _, api := range []struct {
				path   string
				tokens map[string]struct{ Tokens map[string]goldenTokens }
				cases  map[string]agentsGoldenCase
			}{{pathResponses, g.Responses, raw.Responses}, {pathMessages, g.Messages, raw.Messages}} {
				for _, name := range sortedNames(api.cases) {
					want, ok := api.tokens[name].Tokens[fam]
					if !ok {
						continue
					}
					n++
					t.Run(fmt.Sprintf("%s/%s", api.path, name), func(t *testing.T) {
						req, _, err := parseRequest(api.path, api.cases[name].Body)
						if err != nil {
							t.Fatal(err)
						}
						ids, err := lt.Tokens(context.Background(), req, nil)
						if want.Error != "" {
							if err == nil {
								t.Fatalf("vLLM's template refused this conversation (%s); the router rendered %d tokens", want.Error, len(ids))
							}
							return
						}
						if err != nil {
							t.Fatalf("render: %v", err)
						}
						if !slices.Equal(ids, want.IDs) {
							i := 0
							for i < min(len(ids), len(want.IDs)) && ids[i] == want.IDs[i] {
								i++
							}
							got, _ := tk.Decode(ids[i:min(len(ids), i+24)], false)
							exp, _ := tk.Decode(want.IDs[i:min(len(want.IDs), i+24)], false)
							t.Fatalf("%d ids, vLLM %d; first difference at %d:\n got  %q\n want %q", len(ids), len(want.IDs), i, got, exp)
						}
					})
				}
			}
			if full && n < 40 || n < 6 {
				t.Fatalf("only %d shapes rendered for %s", n, fam)
			}
		})
	}
}

// TestTemplateProbesGolden compares the router's probes of each family's
// chat template with what vLLM's /v1/messages serving decides for it
// (gen_agents.py runs vLLM's own probe code): whether inline system messages
// are merged, and the effort thinking disabled maps to.
func TestTemplateProbesGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/agents_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Probes map[string]struct {
			Merge  bool   `json:"merge_inline_system"`
			Effort string `json:"disabled_thinking_effort"`
		} `json:"probes"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	merges := 0
	for _, fam := range sortedNames(g.Probes) {
		want := g.Probes[fam]
		if want.Merge {
			merges++
		}
		t.Run(fam, func(t *testing.T) {
			tk, err := tokenizer.LoadDir(tokenizertest.Dir(t, fam))
			if err != nil {
				t.Fatal(err)
			}
			chat, err := tk.ChatTemplate()
			if err != nil {
				t.Fatal(err)
			}
			if got := chat.SystemFirst(); got != want.Merge {
				t.Errorf("SystemFirst = %v, vLLM merges inline system: %v", got, want.Merge)
			}
			if got := chat.DisabledThinkingEffort(); got != want.Effort {
				t.Errorf("DisabledThinkingEffort = %q, vLLM's probe: %q", got, want.Effort)
			}
		})
	}
	if len(g.Probes) < 4 || merges == 0 || merges == len(g.Probes) {
		t.Fatalf("%d families probed, %d merging: the probes are not exercised both ways", len(g.Probes), merges)
	}
}
