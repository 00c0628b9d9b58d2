package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/scorer"
)

func testAgentSpec() agentSpec {
	return agentSpec{Seed: 7, Conversations: 12, Turns: 5, Systems: 3, SystemWords: 40, Tools: 4,
		MessageWords: 10, FailRate: 0.2, ThinkMax: 20 * time.Millisecond}
}

// TestAgentWorkloadIsSeeded: the same spec gives byte-identical requests,
// another seed other ones.
func TestAgentWorkloadIsSeeded(t *testing.T) {
	a, err := buildAgentWorkload(testAgentSpec())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := buildAgentWorkload(testAgentSpec())
	for i := range a {
		if !slices.Equal(a[i].Prompts, b[i].Prompts) || !slices.Equal(a[i].Think, b[i].Think) || !slices.Equal(a[i].Fail, b[i].Fail) {
			t.Fatalf("conversation %d differs between two builds of one spec", i)
		}
	}
	other := testAgentSpec()
	other.Seed++
	c, _ := buildAgentWorkload(other)
	if a[0].Prompts[0] == c[0].Prompts[0] {
		t.Error("another seed gave the same first request")
	}
}

// TestAgentWorkloadParses runs every request through the router's own
// /v1/messages conversion: each is a chat request with the kind's tools,
// whose messages are the previous turn's plus one tool call and its result,
// so every turn's prompt extends the last; kinds share system prompts.
func TestAgentWorkloadParses(t *testing.T) {
	spec := testAgentSpec()
	convs, err := buildAgentWorkload(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != spec.Conversations {
		t.Fatalf("%d conversations, want %d", len(convs), spec.Conversations)
	}
	systems := map[int]string{}
	fails := 0
	for _, c := range convs {
		if len(c.Prompts) != spec.Turns || len(c.Think) != spec.Turns || len(c.Fail) != spec.Turns {
			t.Fatalf("conversation %d: %d prompts, %d thinks, %d fails, want %d each", c.ID, len(c.Prompts), len(c.Think), len(c.Fail), spec.Turns)
		}
		var prev *scorer.Request
		for turn, body := range c.Prompts {
			req, err := extproc.ParseRequest("/v1/messages", []byte(body))
			if err != nil {
				t.Fatalf("conversation %d turn %d: %v", c.ID, turn, err)
			}
			if req.Kind != scorer.KindChat || req.Model != model || !req.Stream {
				t.Fatalf("conversation %d turn %d: kind %v model %q stream %v", c.ID, turn, req.Kind, req.Model, req.Stream)
			}
			checkTools(t, req.Tools, spec.Tools)
			// system, the task, then an assistant tool call and a tool result per step
			if want := 2 + 2*turn; len(req.Messages) != want {
				t.Fatalf("conversation %d turn %d: %d messages, want %d", c.ID, turn, len(req.Messages), want)
			}
			if turn > 0 {
				checkExtends(t, prev, req)
				if m := req.Messages[len(req.Messages)-2]; m.Role != "assistant" || !bytes.Contains(m.Raw, []byte(`"tool_calls"`)) {
					t.Fatalf("conversation %d turn %d: step message %s, want an assistant tool call", c.ID, turn, m.Raw)
				}
				if m := req.Messages[len(req.Messages)-1]; m.Role != "tool" {
					t.Fatalf("conversation %d turn %d: last message %s, want the tool result", c.ID, turn, m.Raw)
				}
			}
			prev = req
		}
		sys := string(prev.Messages[0].Raw)
		if s, ok := systems[c.System]; ok && s != sys {
			t.Fatalf("kind %d has two system prompts", c.System)
		}
		systems[c.System] = sys
		for _, f := range c.Fail {
			if f {
				fails++
			}
		}
	}
	if len(systems) < 2 {
		t.Errorf("%d agent kinds used of %d", len(systems), spec.Systems)
	}
	if fails == 0 || fails == spec.Conversations*spec.Turns {
		t.Errorf("%d of %d turns fail first, want some at rate %g", fails, spec.Conversations*spec.Turns, spec.FailRate)
	}
}

func checkTools(t *testing.T, raw json.RawMessage, n int) {
	t.Helper()
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &tools); err != nil || len(tools) != n {
		t.Fatalf("tools %s: %v, want %d", raw, err, n)
	}
	for _, tool := range tools {
		if tool.Function.Name == "" || tool.Function.Parameters["type"] != "object" {
			t.Fatalf("tool %+v lost its name or input_schema", tool)
		}
	}
}

func checkExtends(t *testing.T, prev, req *scorer.Request) {
	t.Helper()
	if !bytes.Equal(prev.Tools, req.Tools) {
		t.Fatal("tools changed between turns")
	}
	for i, m := range prev.Messages {
		if !bytes.Equal(m.Raw, req.Messages[i].Raw) {
			t.Fatalf("message %d changed between turns: %s -> %s", i, m.Raw, req.Messages[i].Raw)
		}
	}
}

const (
	msgStart   = `event: message_start` + "\n" + `data: {"type":"message_start","message":{"usage":{"input_tokens":50,"cache_read_input_tokens":32}}}` + "\n\n"
	msgText    = `event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}` + "\n\n"
	msgUsage   = `event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":18,"output_tokens":8,"cache_read_input_tokens":32}}` + "\n\n"
	msgNoCache = `event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{},"usage":{"input_tokens":50,"output_tokens":8}}` + "\n\n"
	msgStop    = `event: message_stop` + "\n" + `data: {"type":"message_stop"}` + "\n\n"
	msgError   = `event: error` + "\n" + `data: {"type":"error","error":{"type":"api_error","message":"boom"}}` + "\n\n"
)

var messagesStreamTests = []struct {
	name    string
	body    string
	wantErr error
}{
	{name: "complete", body: msgStart + msgText + msgText + msgUsage + msgStop},
	{name: "cut before message_stop", body: msgStart + msgText + msgUsage, wantErr: errStreamCut},
	{name: "no cache read reported", body: msgStart + msgText + msgNoCache + msgStop, wantErr: errNoUsage},
	{name: "no message_delta", body: msgStart + msgText + msgStop, wantErr: errNoUsage},
	{name: "no text", body: msgStart + msgUsage + msgStop, wantErr: errNoTokens},
	{name: "error event", body: msgStart + msgText + msgError, wantErr: errStreamError},
	{name: "empty", body: "", wantErr: errStreamCut},
	{name: "negative usage", body: msgStart + msgText + strings.Replace(msgUsage, `"input_tokens":18`, `"input_tokens":-18`, 1) + msgStop,
		wantErr: errBadUsage},
	{name: "bad json", body: "data: {nope\n\n" + msgStop, wantErr: errDecode},
}

func TestReadMessagesStream(t *testing.T) {
	for _, tt := range messagesStreamTests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := readMessagesStream(strings.NewReader(tt.body), time.Now())
			switch {
			case tt.wantErr == errDecode:
				if err == nil {
					t.Fatal("accepted a malformed stream")
				}
				return
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			// input_tokens excludes the cache read: the prompt is their sum.
			if o.Prompt != 50 || o.Cached != 32 || o.TTFT <= 0 {
				t.Errorf("got %+v, want prompt 50 cached 32 and a TTFT", o)
			}
		})
	}
}

func FuzzReadMessagesStream(f *testing.F) {
	for _, tt := range messagesStreamTests {
		f.Add(tt.body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		o, err := readMessagesStream(strings.NewReader(body), time.Now())
		if err == nil && (o.TTFT <= 0 || o.Cached > o.Prompt) {
			t.Errorf("accepted stream with %+v", o)
		}
	})
}

// TestChatTokenizeBody: the oracle tokenizes an agent turn as the chat the
// simulator renders (converted messages, tools, generation prompt), and a
// body the conversion refuses is an error, not a guess.
func TestChatTokenizeBody(t *testing.T) {
	convs, err := buildAgentWorkload(testAgentSpec())
	if err != nil {
		t.Fatal(err)
	}
	tb, err := chatTokenizeBody(convs[0].Prompts[2])
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Model               string            `json:"model"`
		Prompt              *string           `json:"prompt"`
		Messages            []json.RawMessage `json:"messages"`
		Tools               []json.RawMessage `json:"tools"`
		AddGenerationPrompt bool              `json:"add_generation_prompt"`
	}
	if err := json.Unmarshal(tb, &got); err != nil {
		t.Fatal(err)
	}
	if got.Model != model || got.Prompt != nil || len(got.Messages) != 6 || len(got.Tools) != 4 || !got.AddGenerationPrompt {
		t.Errorf("tokenize body %s", tb)
	}
	for _, bad := range []string{`{`, `{"model":"m","max_tokens":1,"messages":"nope"}`} {
		if _, err := chatTokenizeBody(bad); err == nil {
			t.Errorf("chatTokenizeBody(%s) accepted it", bad)
		}
	}
}
