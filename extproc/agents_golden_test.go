package extproc

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"testing"

	"github.com/warmroute/warmroute/scorer"
)

// agentsGolden is testdata/agents_golden.json, written by gen_agents.py from
// vLLM's own conversion code.
type agentsGolden struct {
	Version   string                      `json:"vllm_version"`
	Responses map[string]agentsGoldenCase `json:"responses"`
	Messages  map[string]agentsGoldenCase `json:"messages"`
}

type agentsGoldenCase struct {
	Body               json.RawMessage `json:"body"`
	Error              string          `json:"error"`
	Messages           []any           `json:"messages"`
	Tools              []any           `json:"tools"`
	ChatTemplateKwargs map[string]any  `json:"chat_template_kwargs"`
	ReasoningEffort    *string         `json:"reasoning_effort"`
	Stream             bool            `json:"stream"`
	IncludeUsage       bool            `json:"include_usage"`
	// MergedMessages is vLLM's conversion for a template that wants system
	// messages first, when it differs from Messages.
	MergedMessages []any `json:"merged_messages"`
}

func loadAgentsGolden(t *testing.T) agentsGolden {
	t.Helper()
	b, err := os.ReadFile("testdata/agents_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g agentsGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Responses) < 20 || len(g.Messages) < 20 {
		t.Fatalf("golden has %d Responses and %d Messages shapes, want at least 20 each", len(g.Responses), len(g.Messages))
	}
	return g
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestResponsesGolden converts every Responses shape and compares the chat
// request with the one vLLM built.
func TestResponsesGolden(t *testing.T) {
	g := loadAgentsGolden(t)
	for _, name := range sortedNames(g.Responses) {
		c := g.Responses[name]
		t.Run(name, func(t *testing.T) {
			req, extra, err := parseRequest(pathResponses, c.Body)
			if checkGoldenError(t, c, err) {
				return
			}
			compareChat(t, req, c)
			want := map[string]any{}
			for k, v := range c.ChatTemplateKwargs {
				want[k] = v
			}
			got := templateKwargs(t, req)
			got["continue_final_message"] = req.NoGenerationPrompt
			if !reflect.DeepEqual(got, want) {
				t.Errorf("template kwargs:\n got %v\nwant %v", got, want)
			}
			if extra.includeUsage != req.Stream {
				t.Errorf("includeUsage = %v for stream %v", extra.includeUsage, req.Stream)
			}
		})
	}
}

// TestMessagesGolden does the same for the Anthropic Messages shapes.
func TestMessagesGolden(t *testing.T) {
	g := loadAgentsGolden(t)
	for _, name := range sortedNames(g.Messages) {
		c := g.Messages[name]
		t.Run(name, func(t *testing.T) {
			req, extra, err := parseRequest(pathMessages, c.Body)
			if checkGoldenError(t, c, err) {
				return
			}
			compareChat(t, req, c)
			compareMerged(t, req, c)
			wantEffort := ""
			if c.ReasoningEffort != nil {
				wantEffort = *c.ReasoningEffort
			}
			if req.ReasoningEffort != wantEffort {
				t.Errorf("reasoning_effort = %q, want %q", req.ReasoningEffort, wantEffort)
			}
			var kw map[string]any
			if len(req.ChatTemplateKwargs) > 0 {
				mustUnmarshal(t, req.ChatTemplateKwargs, &kw)
			}
			if !reflect.DeepEqual(kw, c.ChatTemplateKwargs) {
				t.Errorf("chat_template_kwargs = %v, want %v", kw, c.ChatTemplateKwargs)
			}
			if req.Stream != c.Stream || extra.includeUsage != c.IncludeUsage {
				t.Errorf("stream, include_usage = %v, %v; want %v, %v", req.Stream, extra.includeUsage, c.Stream, c.IncludeUsage)
			}
			if req.NoGenerationPrompt {
				t.Error("a Messages request turned the generation prompt off")
			}
		})
	}
}

// compareMerged checks the system-first form the router carries against
// vLLM's merge_inline_system conversion.
func compareMerged(t *testing.T, req *scorer.Request, c agentsGoldenCase) {
	t.Helper()
	if c.MergedMessages == nil {
		if req.SystemFirstMessages != nil {
			t.Fatalf("the router carries a system-first form of %d messages; vLLM's merge changes nothing", len(req.SystemFirstMessages))
		}
		return
	}
	compareMessages(t, "system-first messages", req.SystemFirstMessages, c.MergedMessages)
}

// compareMessages reports messages that differ from vLLM's.
func compareMessages(t *testing.T, what string, msgs []scorer.Message, want []any) {
	t.Helper()
	got := make([]any, len(msgs))
	for i, m := range msgs {
		mustUnmarshal(t, m.Raw, &got[i])
	}
	if g, w := normalizeArguments(got), normalizeArguments(want); !reflect.DeepEqual(g, w) {
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		t.Errorf("%s:\n got %s\nwant %s", what, gb, wb)
	}
}

// checkGoldenError reports whether the case is one vLLM rejects, failing
// unless the router rejects it too as a bad request.
func checkGoldenError(t *testing.T, c agentsGoldenCase, err error) bool {
	t.Helper()
	if c.Error != "" {
		if err == nil || !isBadRequest(err) {
			t.Fatalf("vLLM rejects this body (%s); the router returned %v", c.Error, err)
		}
		return true
	}
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return false
}

func compareChat(t *testing.T, req *scorer.Request, c agentsGoldenCase) {
	t.Helper()
	if req.Kind != scorer.KindChat {
		t.Fatalf("kind = %v, want chat", req.Kind)
	}
	compareMessages(t, "messages", req.Messages, c.Messages)
	var tools []any
	if len(req.Tools) > 0 {
		mustUnmarshal(t, req.Tools, &tools)
		tools = stripNulls(tools).([]any) // the golden records tools without None values
	}
	if !reflect.DeepEqual(tools, c.Tools) {
		gb, _ := json.Marshal(tools)
		wb, _ := json.Marshal(c.Tools)
		t.Errorf("tools:\n got %s\nwant %s", gb, wb)
	}
}

// normalizeArguments parses each tool call's arguments string: the chat
// renderer parses it as vLLM does before the template sees it, so only its
// value matters, not its spacing.
func normalizeArguments(msgs []any) []any {
	b, _ := json.Marshal(msgs)
	var out []any
	_ = json.Unmarshal(b, &out)
	for _, m := range out {
		mm, _ := m.(map[string]any)
		calls, _ := mm["tool_calls"].([]any)
		for _, c := range calls {
			fn, _ := c.(map[string]any)["function"].(map[string]any)
			if s, ok := fn["arguments"].(string); ok {
				var v any
				if json.Unmarshal([]byte(s), &v) == nil {
					fn["arguments"] = v
				}
			}
		}
	}
	return out
}

// templateKwargs is what the renderer passes to the template beyond the
// messages for a chat request: its kwargs, add_generation_prompt, and
// reasoning_effort with enable_thinking unless the kwargs set it
// (tokenizer.ChatRequest.ReasoningEffort).
func templateKwargs(t *testing.T, req *scorer.Request) map[string]any {
	kw := map[string]any{}
	if len(req.ChatTemplateKwargs) > 0 {
		mustUnmarshal(t, req.ChatTemplateKwargs, &kw)
	}
	kw["add_generation_prompt"] = !req.NoGenerationPrompt
	if req.ReasoningEffort != "" {
		kw["reasoning_effort"] = req.ReasoningEffort
		if _, ok := kw["enable_thinking"]; !ok {
			kw["enable_thinking"] = req.ReasoningEffort != "none"
		}
	}
	return kw
}

func stripNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e != nil {
				out[k] = stripNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripNulls(e)
		}
		return out
	}
	return v
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
}
