package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// The agent workload: coding-agent conversations over Anthropic's Messages
// API (POST /v1/messages). Every request carries a system prompt and a tool
// set shared by all agents of its kind, then the whole history so far: the
// user's task, and per step the assistant's text and tool_use block followed
// by the user's tool_result block. Each request is the previous one plus one
// step, as an agent loop resends it, so the rendered prompt grows turn by
// turn and its prefix is the previous turn's prompt.

// agentSpec sizes the agent workload. Every count must be positive.
type agentSpec struct {
	Seed          uint64
	Conversations int
	Turns         int // requests per conversation
	Systems       int // distinct agent kinds (system prompt + tools)
	SystemWords   int
	Tools         int // tools per agent kind
	MessageWords  int // per task, assistant text and tool result
	FailRate      float64
	ThinkMax      time.Duration
}

// Messages API wire shapes, as the workload sends them.
type (
	messagesRequest struct {
		Model     string         `json:"model"`
		MaxTokens int            `json:"max_tokens"`
		Stream    bool           `json:"stream"`
		System    []contentBlock `json:"system"`
		Tools     []agentTool    `json:"tools"`
		Messages  []agentMessage `json:"messages"`
	}
	agentMessage struct {
		Role    string         `json:"role"`
		Content []contentBlock `json:"content"`
	}
	contentBlock struct {
		Type      string         `json:"type"`
		Text      string         `json:"text,omitempty"`
		ID        string         `json:"id,omitempty"`
		Name      string         `json:"name,omitempty"`
		Input     map[string]any `json:"input,omitempty"`
		ToolUseID string         `json:"tool_use_id,omitempty"`
		Content   string         `json:"content,omitempty"`
	}
	agentTool struct {
		Name        string      `json:"name"`
		Description string      `json:"description"`
		InputSchema inputSchema `json:"input_schema"`
	}
	inputSchema struct {
		Type       string                    `json:"type"`
		Properties map[string]schemaProperty `json:"properties"`
		Required   []string                  `json:"required"`
	}
	schemaProperty struct {
		Type        string `json:"type"`
		Description string `json:"description"`
	}
)

// toolVerbs name the tools; a kind's tools are the first Tools of them,
// so kinds share tool names but not their descriptions.
var toolVerbs = []string{"read_file", "write_file", "run_tests", "search_code", "list_dir", "run_shell", "fetch_url", "edit_file"}

// agentKind is one system prompt and its tools, shared by many agents.
type agentKind struct {
	system []contentBlock
	tools  []agentTool
}

func newAgentKind(rng *rand.Rand, spec agentSpec, i int) agentKind {
	k := agentKind{system: []contentBlock{{Type: "text",
		Text: "You are coding agent number " + strconv.Itoa(i) + ". " + words(rng, spec.SystemWords)}}}
	for t := range spec.Tools {
		name := toolVerbs[t%len(toolVerbs)]
		if t >= len(toolVerbs) {
			name += "_" + strconv.Itoa(t/len(toolVerbs))
		}
		k.tools = append(k.tools, agentTool{Name: name, Description: words(rng, 12),
			InputSchema: inputSchema{Type: "object", Required: []string{"target"}, Properties: map[string]schemaProperty{
				"target": {Type: "string", Description: words(rng, 6)},
				"detail": {Type: "string", Description: words(rng, 6)},
			}}})
	}
	return k
}

// buildAgentWorkload makes the agent conversations of spec; each prompt is
// a complete /v1/messages request body. Like buildWorkload it is a pure
// function of spec.
func buildAgentWorkload(spec agentSpec) ([]conversation, error) {
	rng := rand.New(rand.NewPCG(spec.Seed, 0xa6e47))
	kinds := make([]agentKind, spec.Systems)
	for i := range kinds {
		kinds[i] = newAgentKind(rng, spec, i)
	}
	convs := make([]conversation, spec.Conversations)
	for c := range convs {
		kind := rng.IntN(spec.Systems)
		req := messagesRequest{Model: model, MaxTokens: maxTokens, Stream: true,
			System: kinds[kind].system, Tools: kinds[kind].tools,
			Messages: []agentMessage{{Role: "user", Content: []contentBlock{{Type: "text",
				Text: "Task " + strconv.Itoa(c) + ": " + words(rng, spec.MessageWords)}}}}}
		conv := conversation{ID: c, System: kind, Prompts: make([]string, spec.Turns),
			Think: make([]time.Duration, spec.Turns), Fail: make([]bool, spec.Turns)}
		for t := range spec.Turns {
			if t > 0 {
				req.Messages = append(req.Messages, agentStep(rng, spec, kinds[kind].tools, c, t)...)
			}
			body, err := json.Marshal(req)
			if err != nil {
				return nil, fmt.Errorf("encoding agent request: %w", err)
			}
			conv.Prompts[t] = string(body)
			conv.Think[t] = time.Duration(rng.Int64N(int64(spec.ThinkMax) + 1))
			conv.Fail[t] = rng.Float64() < spec.FailRate
		}
		convs[c] = conv
	}
	return convs, nil
}

// agentStep is one step of an agent loop: the assistant explains and calls
// a tool, the client answers with the tool's result.
func agentStep(rng *rand.Rand, spec agentSpec, tools []agentTool, conv, turn int) []agentMessage {
	id := fmt.Sprintf("toolu_%04d_%02d", conv, turn)
	tool := tools[rng.IntN(len(tools))]
	return []agentMessage{
		{Role: "assistant", Content: []contentBlock{
			{Type: "text", Text: words(rng, spec.MessageWords/4+1)},
			{Type: "tool_use", ID: id, Name: tool.Name, Input: map[string]any{"target": words(rng, 3), "detail": words(rng, 5)}},
		}},
		{Role: "user", Content: []contentBlock{{Type: "tool_result", ToolUseID: id, Content: words(rng, spec.MessageWords)}}},
	}
}
