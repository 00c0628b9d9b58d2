package extproc

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/warmroute/warmroute/scorer"
	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// vllmGolden is tokenizer/testdata/vllm_golden.json, written by
// tokenizer/testdata/gen_vllm.py from vLLM's own request preprocessing.
type vllmGolden struct {
	VLLMVersion string `json:"vllm_version"`
	HarmonyDate string `json:"harmony_start_date"`
	Cases       []struct {
		Name    string          `json:"name"`
		Kind    string          `json:"kind"`
		Request json.RawMessage `json:"request"`
		// Families, when set, are the only families the case was rendered for.
		Families []string `json:"families"`
	} `json:"cases"`
	Families map[string]map[string]struct {
		IDs   []uint32 `json:"ids"`
		Error string   `json:"error"`
	} `json:"families"`
}

// goldenDirs maps the golden's family names to the test tokenizer files.
var goldenDirs = map[string]string{"mistral": "llama2"}

// goldenTokenizer loads the test tokenizer files of a golden's family.
func goldenTokenizer(t *testing.T, fam string) *tokenizer.Tokenizer {
	t.Helper()
	dir := fam
	if d, ok := goldenDirs[fam]; ok {
		dir = d
	}
	tk, err := tokenizer.LoadDir(tokenizertest.Dir(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// knownVLLMDivergences are the shapes where the router's tokens differ from
// vLLM's, each with the reason. A case listed here must still differ, so a
// fix is noticed.
var knownVLLMDivergences = map[string]string{}

// TestVLLMGolden parses each golden request as the router does and encodes
// it locally; the ids must equal the ones vLLM's own code computed, and a
// request vLLM rejects must not get a prediction the router would route on
// as if it were valid (an error, or a known divergence). GPT-OSS chat goes
// through the router's Harmony rendering, with the golden's start date.
func TestVLLMGolden(t *testing.T) {
	data, err := os.ReadFile("../tokenizer/testdata/vllm_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g vllmGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if g.VLLMVersion != tokenizer.VLLMVersion {
		t.Fatalf("golden from vLLM %s, the router mirrors %s", g.VLLMVersion, tokenizer.VLLMVersion)
	}
	for fam, results := range g.Families {
		local := scorer.NewLocalTokens(goldenTokenizer(t, fam), scorer.WithHarmonyDate(func() string { return g.HarmonyDate }))
		var shapes, exact, rejected int
		for _, c := range g.Cases {
			if c.Families != nil && !slices.Contains(c.Families, fam) {
				continue
			}
			want, ok := results[c.Name]
			if !ok {
				t.Fatalf("%s/%s: no result in the golden", fam, c.Name)
			}
			shapes++
			t.Run(fam+"/"+c.Name, func(t *testing.T) {
				got, err := vllmGoldenTokens(local, c.Kind, c.Request)
				match := err == nil && want.Error == "" && slices.Equal(got, want.IDs)
				switch {
				case match:
					exact++
				case err != nil && want.Error != "":
					rejected++
				}
				if why, ok := knownVLLMDivergences[fam+"/"+c.Name]; ok {
					if match {
						t.Fatalf("known divergence (%s) is gone: remove it from the list", why)
					}
					return
				}
				compareGoldenIDs(t, got, err, want.IDs, want.Error)
			})
		}
		t.Logf("%s: %d shapes, %d exact, %d rejected by both", fam, shapes, exact, rejected)
	}
}

// compareGoldenIDs fails unless the router's ids equal vLLM's, or vLLM
// rejected the request (wantErr) and the router refused it too.
func compareGoldenIDs(t *testing.T, got []uint32, err error, want []uint32, wantErr string) {
	t.Helper()
	switch {
	case wantErr != "" && err == nil:
		t.Fatalf("router encoded %d tokens; vLLM rejected the request: %s", len(got), wantErr)
	case wantErr != "":
	case err != nil:
		t.Fatalf("router: %v; vLLM encoded %d tokens", err, len(want))
	case !slices.Equal(got, want):
		t.Fatalf("ids differ at %d (router %d tokens, vLLM %d)", firstDiff(got, want), len(got), len(want))
	}
}

func vllmGoldenTokens(local *scorer.LocalTokens, kind string, body json.RawMessage) ([]uint32, error) {
	path := pathChatCompletions
	if kind == "completion" {
		path = pathCompletions
	}
	// The model field, spliced in so the request's key order is kept.
	body = append([]byte(`{"model":"m",`), body[1:]...)
	req, err := ParseRequest(path, body)
	if err != nil {
		return nil, err
	}
	return local.Tokens(context.Background(), req, nil)
}

func firstDiff(a, b []uint32) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
