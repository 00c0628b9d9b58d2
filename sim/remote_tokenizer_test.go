package sim

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warmroute/warmroute/tokenizer"
	"github.com/warmroute/warmroute/tokenizer/tokenizertest"
)

// TestRouterRemoteAndDriftAgainstSim drives the router's remote tokenizer
// and drift detector against the simulator's POST /tokenize: with the same
// tokenizer files both ways they agree; with a different local tokenizer
// (Llama 3 against a Qwen 3 engine) the detector counts a disagreement.
func TestRouterRemoteAndDriftAgainstSim(t *testing.T) {
	qwen := tokenizertest.Dir(t, "qwen3")
	_, ts := startServer(t, Options{TokenizerDir: qwen})
	remote := tokenizer.NewRemote(ts.URL, ts.Client())
	ctx := context.Background()
	msgs := json.RawMessage(`[{"role":"user","content":"Route me to a warm cache, please."}]`)
	chatReq := tokenizer.ChatRequest{Messages: msgs, AddGenerationPrompt: true}

	local, err := tokenizer.LoadDir(qwen)
	if err != nil {
		t.Fatal(err)
	}
	chat, err := local.ChatTemplate()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("remote equals local", func(t *testing.T) {
		got, err := remote.Tokenize(ctx, "prefix caching saves prefill", true)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := local.Encode("prefix caching saves prefill", true)
		if !slices.Equal(got, want) {
			t.Fatalf("remote %v, local %v", got, want)
		}
		gotChat, err := remote.TokenizeChat(ctx, chatReq)
		if err != nil {
			t.Fatal(err)
		}
		wantChat, err := local.EncodeChat(chat, chatReq)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(gotChat, wantChat) {
			t.Fatalf("remote chat %v, local %v", gotChat, wantChat)
		}
	})
	t.Run("drift", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		m, err := tokenizer.NewMetrics(reg)
		if err != nil {
			t.Fatal(err)
		}
		llama, err := tokenizer.LoadDir(tokenizertest.Dir(t, "llama3"))
		if err != nil {
			t.Fatal(err)
		}
		same := tokenizer.NewDrift(local, chat, remote, 1, m)
		wrong := tokenizer.NewDrift(llama, nil, remote, 1, m)
		if ok, err := same.CheckPrompt(ctx, "the same ids both ways", true); err != nil || !ok {
			t.Fatalf("same tokenizer: agree=%v, %v", ok, err)
		}
		if ok, err := same.CheckChat(ctx, chatReq); err != nil || !ok {
			t.Fatalf("same tokenizer, chat: agree=%v, %v", ok, err)
		}
		if ok, err := wrong.CheckPrompt(ctx, "Über naïve café prompts diverge", true); err != nil || ok {
			t.Fatalf("wrong tokenizer: agree=%v, %v; want a disagreement", ok, err)
		}
		if n := testutil.CollectAndCount(reg, "warmroute_tokenizer_drift_checks_total"); n < 2 {
			t.Fatalf("drift metric has %d series, want agree and disagree", n)
		}
	})
}
