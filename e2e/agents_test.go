package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/openai"
)

// agentTurn is one agent API request through Envoy and what became of it.
type agentTurn struct {
	simID    string
	decision decision
	prompt   int
	cached   int
	id       string // the Responses response id
	text     string // the answer's text
	status   int
	body     []byte
}

func agentPost(t *testing.T, ps *harness.PrefixStack, path string, req map[string]any) agentTurn {
	t.Helper()
	r := mustDo(t, http.MethodPost, ps.URL(path), mustJSON(t, req), nil)
	turn := agentTurn{status: r.status, body: r.body}
	if r.status != http.StatusOK {
		return turn
	}
	turn.simID = servedBy(t, ps.Stack, r)
	turn.decision = parseDecision(r.header.Get("x-warmroute-decision"))
	payload := r.body
	if req["stream"] == true {
		payload = completedResponse(t, r.body)
	}
	var b struct {
		ID     string `json:"id"`
		Output []struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Usage struct {
			InputTokens   int  `json:"input_tokens"`
			CacheRead     *int `json:"cache_read_input_tokens"`
			InputsDetails *struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(payload, &b); err != nil {
		t.Fatalf("decoding %s: %v", payload, err)
	}
	turn.id = b.ID
	switch {
	case b.Usage.InputsDetails != nil: // Responses
		turn.prompt, turn.cached = b.Usage.InputTokens, b.Usage.InputsDetails.CachedTokens
		if len(b.Output) > 0 && len(b.Output[0].Content) > 0 {
			turn.text = b.Output[0].Content[0].Text
		}
	case b.Usage.CacheRead != nil: // Messages: input_tokens excludes the cache read
		turn.prompt, turn.cached = b.Usage.InputTokens+*b.Usage.CacheRead, *b.Usage.CacheRead
		if len(b.Content) > 0 {
			turn.text = b.Content[0].Text
		}
	default:
		t.Fatalf("no usage with cached tokens in %s", r.body)
	}
	return turn
}

// completedResponse returns the response of a Responses stream's
// response.completed event.
func completedResponse(t *testing.T, body []byte) []byte {
	t.Helper()
	events, err := openai.ReadEvents(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		var ev struct {
			Type     string          `json:"type"`
			Response json.RawMessage `json:"response"`
		}
		if json.Unmarshal(e, &ev) == nil && ev.Type == "response.completed" {
			return ev.Response
		}
	}
	t.Fatalf("no response.completed event in %q", body)
	return nil
}

// TestAgentConversationsStayWarm: a ten-turn agent conversation over
// /v1/messages (the client resends the history) and one over /v1/responses
// (the client sends the history as input items) stay on one engine, the
// router's matched prefix grows every turn and the engine reports cached
// tokens every turn after the first; a Responses conversation chained by
// previous_response_id always reaches the engine that stored it, and once
// that engine dies the next turn gets vLLM's not-found answer from the router.
func TestAgentConversationsStayWarm(t *testing.T) {
	ps := newPrefixStack(t, harness.PrefixOptions{})
	t.Run("messages", func(t *testing.T) { testMessagesConversation(t, ps) })
	t.Run("responses items", func(t *testing.T) { testResponsesItemsConversation(t, ps) })
	t.Run("previous_response_id", func(t *testing.T) { testPreviousResponseID(t, ps) })
}

func checkWarmTurn(t *testing.T, ps *harness.PrefixStack, i int, turn, prev, first agentTurn) {
	t.Helper()
	if turn.status != http.StatusOK {
		t.Fatalf("turn %d: status %d: %s", i, turn.status, turn.body)
	}
	if i == 0 {
		return
	}
	matched := turn.decision.confirmed + turn.decision.spec
	prevMatched := prev.decision.confirmed + prev.decision.spec
	t.Logf("turn %d: %s, matched %dc+%ds/%d blocks, prompt %d cached %d", i, turn.simID,
		turn.decision.confirmed, turn.decision.spec, turn.decision.total, turn.prompt, turn.cached)
	if turn.simID != first.simID {
		t.Fatalf("turn %d went to %s, the conversation is warm on %s (decision %q)", i, turn.simID, first.simID, turn.decision.raw)
	}
	if turn.cached <= 0 {
		t.Fatalf("turn %d: the engine reported %d cached tokens", i, turn.cached)
	}
	// The router keyed the same tokens the engine cached: its matched
	// blocks are exactly the engine's cached tokens.
	if bs := simByID(t, ps, turn.simID).BlockSize; matched*bs != turn.cached {
		t.Fatalf("turn %d: the router matched %d blocks of %d tokens, the engine cached %d tokens", i, matched, bs, turn.cached)
	}
	if matched <= prevMatched {
		t.Fatalf("turn %d matched %d blocks, turn %d matched %d: the match did not grow (%q)", i, matched, i-1, prevMatched, turn.decision.raw)
	}
}

// waitKnownUsage waits until the router has read known usage (prompt and
// cached tokens, which feed the TTL controller) from n more responses than
// before.
func waitKnownUsage(t *testing.T, ps *harness.PrefixStack, before float64, n int) {
	t.Helper()
	testwait.Until(t, 10*time.Second, func() string {
		if v := scrapeValue(t, ps, usageMetric, map[string]string{"result": "known"}); v != max(before, 0)+float64(n) {
			return fmt.Sprintf("%s{result=known} = %v, want %v", usageMetric, v, max(before, 0)+float64(n))
		}
		return ""
	})
}

func testMessagesConversation(t *testing.T, ps *harness.PrefixStack) {
	usageBefore := scrapeValue(t, ps, usageMetric, map[string]string{"result": "known"})
	system := "You are a coding agent. " + words("agentsys", 30)
	var msgs []map[string]any
	var turns []agentTurn
	for i := range 10 {
		msgs = append(msgs, map[string]any{"role": "user", "content": []map[string]any{
			{"type": "text", "text": fmt.Sprintf("Step %d: %s", i, words(fmt.Sprintf("msgturn%d", i), 12))}}})
		turn := agentPost(t, ps, "/v1/messages", map[string]any{"model": ps.Model, "max_tokens": 8,
			"system": []map[string]any{{"type": "text", "text": system}}, "messages": msgs})
		if i > 0 {
			checkWarmTurn(t, ps, i, turn, turns[i-1], turns[0])
		} else if turn.status != http.StatusOK {
			t.Fatalf("turn 0: %d %s", turn.status, turn.body)
		}
		turns = append(turns, turn)
		msgs = append(msgs, map[string]any{"role": "assistant", "content": turn.text})
	}
	waitKnownUsage(t, ps, usageBefore, 10)
}

func testResponsesItemsConversation(t *testing.T, ps *harness.PrefixStack) {
	usageBefore := scrapeValue(t, ps, usageMetric, map[string]string{"result": "known"})
	instructions := "You are a research agent. " + words("respsys", 30)
	var items []map[string]any
	var turns []agentTurn
	for i := range 10 {
		items = append(items, map[string]any{"type": "message", "role": "user", "content": []map[string]any{
			{"type": "input_text", "text": fmt.Sprintf("Step %d: %s", i, words(fmt.Sprintf("respturn%d", i), 12))}}})
		turn := agentPost(t, ps, "/v1/responses", map[string]any{"model": ps.Model, "max_output_tokens": 8,
			"instructions": instructions, "input": items, "store": false})
		if i > 0 {
			checkWarmTurn(t, ps, i, turn, turns[i-1], turns[0])
		} else if turn.status != http.StatusOK {
			t.Fatalf("turn 0: %d %s", turn.status, turn.body)
		}
		turns = append(turns, turn)
		items = append(items, map[string]any{"type": "message", "role": "assistant", "status": "completed",
			"content": []map[string]any{{"type": "output_text", "text": turn.text, "annotations": []any{}}}})
	}
	waitKnownUsage(t, ps, usageBefore, 10)
}

func testPreviousResponseID(t *testing.T, ps *harness.PrefixStack) {
	instructions := "You are a chained agent. " + words("chainsys", 30)
	hitsBefore := scrapeValue(t, ps, "warmroute_affinity_lookups_total", map[string]string{"result": "hit"})
	var first agentTurn
	prev := ""
	for i := range 10 {
		req := map[string]any{"model": ps.Model, "max_output_tokens": 8, "instructions": instructions,
			"input": fmt.Sprintf("Step %d: %s", i, words(fmt.Sprintf("chain%d", i), 12))}
		if prev != "" {
			req["previous_response_id"] = prev
		}
		// Every other turn streams: the id is learnt from response.created.
		req["stream"] = i%2 == 1
		turn := agentPost(t, ps, "/v1/responses", req)
		if turn.status != http.StatusOK {
			t.Fatalf("turn %d: %d %s", i, turn.status, turn.body)
		}
		if i == 0 {
			first = turn
		} else {
			if turn.simID != first.simID {
				t.Fatalf("turn %d (previous_response_id %s) went to %s, the response is stored on %s", i, prev, turn.simID, first.simID)
			}
			if !strings.Contains(turn.decision.raw, "previous_response=hit") {
				t.Fatalf("turn %d decision %q, want previous_response=hit", i, turn.decision.raw)
			}
			if turn.cached <= 0 {
				t.Fatalf("turn %d: %d cached tokens on the storing engine", i, turn.cached)
			}
		}
		prev = turn.id
	}
	if hits := scrapeValue(t, ps, "warmroute_affinity_lookups_total", map[string]string{"result": "hit"}); hits-max(hitsBefore, 0) != 9 {
		t.Fatalf("affinity hits grew by %v, want 9", hits-max(hitsBefore, 0))
	}
	victim := simByID(t, ps, first.simID)
	victim.Kill()
	testwait.Until(t, 20*time.Second, func() string {
		if v := scrapeValue(t, ps, "warmroute_scorer_endpoints", map[string]string{"pool": ps.Model, "state": "down"}); v != 1 {
			return fmt.Sprintf("down endpoints %v, want 1", v)
		}
		return ""
	})
	turn := agentPost(t, ps, "/v1/responses", map[string]any{"model": ps.Model, "instructions": instructions,
		"previous_response_id": prev, "input": "after the engine died"})
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
		} `json:"error"`
	}
	if turn.status != http.StatusNotFound || json.Unmarshal(turn.body, &e) != nil ||
		!strings.HasPrefix(e.Error.Message, fmt.Sprintf("Response with id '%s' not found", prev)) ||
		e.Error.Type != "invalid_request_error" || e.Error.Param == nil || *e.Error.Param != "response_id" {
		t.Fatalf("after the storing engine died: %d %s", turn.status, turn.body)
	}
	if v := scrapeValue(t, ps, "warmroute_affinity_lookups_total", map[string]string{"result": "endpoint_down"}); v != 1 {
		t.Fatalf("affinity endpoint_down = %v, want 1", v)
	}
}
