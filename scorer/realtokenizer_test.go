package scorer

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

func chatTurns(t *testing.T, msgs ...string) *Request {
	t.Helper()
	req := &Request{Kind: KindChat, Model: "qwen"}
	for i, text := range msgs {
		role := "system" // then user and assistant alternate
		switch {
		case i > 0 && i%2 == 1:
			role = "user"
		case i > 0:
			role = "assistant"
		}
		raw, err := json.Marshal(map[string]string{"role": role, "content": text})
		if err != nil {
			t.Fatal(err)
		}
		req.Messages = append(req.Messages, Message{Role: role, Content: text, Raw: raw})
	}
	return req
}

func sharedLead(a, b []index.Key) int {
	n := 0
	for n < min(len(a), len(b)) && a[n] == b[n] {
		n++
	}
	return n
}

// A follow-up turn re-renders the whole conversation; its leading blocks
// must key exactly as the first turn's did, or multi-turn chat never hits.
func TestRealTokenizerChatFollowUpSharesKeys(t *testing.T) {
	tk, err := tokenizer.LoadDir(tokenizertest.Dir(t, "qwen3"))
	if err != nil {
		t.Fatal(err)
	}
	local := NewLocalTokens(tk)
	system := strings.Repeat("You are a careful assistant for a logistics company. ", 20)
	turn1 := chatTurns(t, system, "Where is order 1234?")
	turn2 := chatTurns(t, system, "Where is order 1234?", "It left the depot this morning.", "When will it arrive?")
	other := chatTurns(t, "Be brief.", "Hello")
	keys := func(req *Request) []index.Key {
		ids, err := local.Tokens(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		k, err := index.AppendKeys(nil, index.Identity{Model: "qwen"}, 16, ids)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k1, k2, ko := keys(turn1), keys(turn2), keys(other)
	shared := sharedLead(k1, k2)
	t.Logf("turn 1: %d blocks, turn 2: %d blocks, shared: %d", len(k1), len(k2), shared)
	// Every full block of turn 1 before its generation prompt is shared;
	// only the last block, holding the assistant header, may differ.
	if len(k1) < 10 || shared < len(k1)-1 || len(k2) <= len(k1) {
		t.Fatalf("turn 1 has %d blocks, turn 2 %d, sharing %d leading: want all but at most the last", len(k1), len(k2), shared)
	}
	if n := sharedLead(k1, ko); n != 0 {
		t.Fatalf("an unrelated conversation shares %d leading blocks", n)
	}
	hits, _ := local.prefix.Stats()
	if hits == 0 {
		t.Fatal("the follow-up turn did not re-use the first turn's ids from the prefix cache")
	}
}

// The same through Pick: the engine confirms turn 1's blocks, and turn 2
// follows them to that endpoint.
func TestRealTokenizerFollowUpRoutesToWarmEndpoint(t *testing.T) {
	tk, err := tokenizer.LoadDir(tokenizertest.Dir(t, "qwen3"))
	if err != nil {
		t.Fatal(err)
	}
	ix, _ := index.New(index.Options{})
	pools := []PoolConfig{{Name: "qwen", Endpoints: []string{"10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.3:8000"}}}
	s := New(NewPools(pools, ""), &Load{}, Options{Index: ix, Tokens: map[string]Tokens{"qwen": NewLocalTokens(tk)}})
	system := strings.Repeat("Answer questions about the attached contract. ", 30)
	turn1 := chatTurns(t, system, "Who are the parties?")
	ids, err := s.opts.Tokens["qwen"].Tokens(context.Background(), turn1, nil)
	if err != nil {
		t.Fatal(err)
	}
	full := len(ids) / 16 * 16
	hashes := make([]uint64, full/16)
	for i := range hashes {
		hashes[i] = uint64(i + 1)
	}
	if _, err := ix.Store(index.Stored{Endpoint: "10.0.0.3:8000", Hashes: hashes, Tokens: ids[:full], BlockSize: 16, Identity: index.Identity{Model: "qwen"}}); err != nil {
		t.Fatal(err)
	}
	turn2 := chatTurns(t, system, "Who are the parties?", "Acme and Globex.", "What is the term?")
	d, err := s.Pick(context.Background(), turn2)
	if err != nil {
		t.Fatal(err)
	}
	if d.Endpoint != "10.0.0.3:8000" || d.Basis != BasisConfirmed || d.Match.Confirmed < len(hashes)-1 {
		t.Fatalf("follow-up went to %s (%s), want the warm 10.0.0.3:8000 with %d+ confirmed blocks", d.Endpoint, d.Reason, len(hashes)-1)
	}
}
