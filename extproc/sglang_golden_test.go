package extproc

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/warmroute/warmroute/scorer"
	"github.com/warmroute/warmroute/tokenizer"
)

// sglangGolden is tokenizer/testdata/sglang_golden.json, written by
// tokenizer/testdata/gen_sglang.py from SGLang's own request preprocessing.
type sglangGolden struct {
	SGLangVersion string `json:"sglang_version"`
	Cases         []struct {
		Name    string          `json:"name"`
		Kind    string          `json:"kind"`
		Request json.RawMessage `json:"request"`
	} `json:"cases"`
	Families map[string]map[string]struct {
		IDs   []uint32 `json:"ids"`
		Error string   `json:"error"`
	} `json:"families"`
}

// refusedSGLang are the families whose shapes SGLang renders but the router
// refuses for an SGLang pool (ErrUnsupported: routed on load, never a wrong
// prediction), with the reason. Every shape SGLang renders must still be
// refused, so a fix is noticed.
var refusedSGLang = map[string]string{
	"mistral": "transformers 5.19 (SGLang's pin) rebuilds the Llama tokenizer's Prepend normalizer as a Metaspace pre-tokenizer (tokenizer.SGLangCompatible)",
}

// TestSGLangGolden parses each golden request as the router does and encodes
// it locally for a pool whose engine is SGLang; the ids must equal the ones
// SGLang's own code computed, a request SGLang rejects must fail, and a
// refused shape must fail with ErrUnsupported.
func TestSGLangGolden(t *testing.T) {
	data, err := os.ReadFile("../tokenizer/testdata/sglang_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g sglangGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if g.SGLangVersion != tokenizer.SGLangVersion {
		t.Fatalf("golden from SGLang %s, the router mirrors %s", g.SGLangVersion, tokenizer.SGLangVersion)
	}
	for fam, results := range g.Families {
		local := scorer.NewLocalTokens(goldenTokenizer(t, fam), scorer.WithEngine(tokenizer.EngineSGLang))
		var exact, refused, rejected int
		for _, c := range g.Cases {
			want := results[c.Name]
			t.Run(fam+"/"+c.Name, func(t *testing.T) {
				got, err := vllmGoldenTokens(local, c.Kind, c.Request)
				switch {
				case err != nil && want.Error != "":
					rejected++
				case err == nil && slices.Equal(got, want.IDs):
					exact++
				case errors.Is(err, tokenizer.ErrUnsupported):
					refused++
				}
				if why, ok := refusedSGLang[fam]; ok && want.Error == "" {
					if !errors.Is(err, tokenizer.ErrUnsupported) {
						t.Fatalf("refused family (%s): got err %v", why, err)
					}
					return
				}
				switch {
				case want.Error != "" && err == nil:
					t.Fatalf("router encoded %d tokens; SGLang rejected the request: %s", len(got), want.Error)
				case want.Error != "":
				case err != nil:
					t.Fatalf("router: %v; SGLang encoded %d tokens", err, len(want.IDs))
				case !slices.Equal(got, want.IDs):
					t.Fatalf("ids differ at %d (router %d tokens, SGLang %d)\nrouter %v\nsglang %v", firstDiff(got, want.IDs), len(got), len(want.IDs), tail(got, firstDiff(got, want.IDs)), tail(want.IDs, firstDiff(got, want.IDs)))
				}
			})
		}
		t.Logf("%s: %d shapes, %d exact, %d rejected by both, %d refused (ErrUnsupported)", fam, len(g.Cases), exact, rejected, refused)
	}
}

func tail(ids []uint32, from int) []uint32 {
	from = max(0, from-3)
	return ids[from:min(len(ids), from+12)]
}
