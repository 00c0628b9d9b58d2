package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/events/wire"
)

func cachedTokens(t *testing.T, r response) int {
	t.Helper()
	if r.Usage == nil || r.Usage.PromptTokensDetails == nil || r.Usage.PromptTokensDetails.CachedTokens == nil {
		t.Fatalf("no usage.prompt_tokens_details.cached_tokens in %+v", r)
	}
	return *r.Usage.PromptTokensDetails.CachedTokens
}

func TestUsageCachedTokensOnRepeat(t *testing.T) {
	_, ts := startServer(t, Options{PromptTokensDetails: true, BlockSize: 4})
	prompt := longPrompt("tok", 10) // 10 tokens
	tests := []struct {
		name, path, body string
		stream           bool
	}{
		{"completions", "/v1/completions", fmt.Sprintf(`{"model":%q,"prompt":%q,"max_tokens":1}`, DefaultModel, prompt), false},
		{"completions stream", "/v1/completions", fmt.Sprintf(`{"model":%q,"prompt":%q,"max_tokens":1,"stream":true,"stream_options":{"include_usage":true}}`, DefaultModel, "other "+prompt), true},
		{"chat", "/v1/chat/completions", fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":%q}],"max_tokens":1}`, DefaultModel, prompt), false},
		{"chat stream", "/v1/chat/completions", fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":%q}],"max_tokens":1,"stream":true,"stream_options":{"include_usage":true}}`, DefaultModel, "third "+prompt), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got [2]int
			for i := range got {
				resp := post(t, ts.URL, tt.path, tt.body, nil)
				r := lastResponse(t, resp, tt.stream)
				got[i] = cachedTokens(t, r)
				if want := (r.Usage.PromptTokens - 1) / 4 * 4; i == 1 && got[i] != want {
					t.Fatalf("repeat cached %d of %d prompt tokens, want %d", got[i], r.Usage.PromptTokens, want)
				}
			}
			// The chat cases share their template's first block with earlier cases.
			if got[1] <= got[0] {
				t.Fatalf("cached tokens first %d then %d", got[0], got[1])
			}
		})
	}
}

// lastResponse is the JSON body, or the stream's usage chunk.
func lastResponse(t *testing.T, resp *http.Response, stream bool) response {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if stream {
		chunks := readSSE(t, resp.Body)
		return chunks[len(chunks)-1]
	}
	b, _ := io.ReadAll(resp.Body)
	return decodeResponse(t, b)
}

func TestFailPrefillStoresNothing(t *testing.T) {
	s, ts := startServer(t, Options{BlockSize: 4})
	resp := post(t, ts.URL, "/v1/completions", fmt.Sprintf(`{"model":%q,"prompt":%q}`, DefaultModel, longPrompt("x", 12)),
		map[string]string{failPrefillHeader: "true"})
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", resp.StatusCode)
	}
	if st := s.Engine().CacheState(); len(st.Blocks) != 0 || st.UsedBlocks != 0 {
		t.Fatalf("cache after failed prefill: %+v", st)
	}
	waitGauges(t, s, 0, 0)
	resp = post(t, ts.URL, "/v1/completions", `{"model":"m","prompt":"a"}`, map[string]string{failPrefillHeader: "maybe"})
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad header: status %d, want 400", resp.StatusCode)
	}
}

func TestDebugEndpoints(t *testing.T) {
	s, ts := startServer(t, Options{BlockSize: 4, LoRAAdapters: []string{"ad"}})
	body := fmt.Sprintf(`{"model":"ad","prompt":%q,"cache_salt":"s1"}`, longPrompt("y", 9))
	post(t, ts.URL, "/v1/completions", body, nil).Body.Close()
	t.Run("cache state", func(t *testing.T) {
		resp, err := http.Get(ts.URL + "/debug/cache")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st CacheState
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
		if len(st.Blocks) != 2 || st.Blocks[0].ParentHash != nil || *st.Blocks[1].ParentHash != st.Blocks[0].Hash ||
			st.Blocks[0].LoRAName != "ad" || st.BlockSize != 4 || len(st.Blocks[1].TokenIDs) != 4 {
			t.Fatalf("cache = %+v", st)
		}
	})
	tests := []struct {
		name, path string
		want       int
	}{
		{"pause", "/debug/events?paused=true", http.StatusOK},
		{"pause needs a bool", "/debug/events?paused=perhaps", http.StatusBadRequest},
		{"reset", "/debug/reset_prefix_cache", http.StatusOK},
		{"vllm reset path", "/reset_prefix_cache", http.StatusOK},
		{"restart", "/debug/restart", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, ts.URL, tt.path, "", nil)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
	if n := len(s.Engine().CacheState().Blocks); n != 0 {
		t.Fatalf("%d blocks after reset", n)
	}
}

func TestResetRefusedWhileRunning(t *testing.T) {
	s, ts := startServer(t, Options{BlockSize: 4, DecodePerToken: 10e6})
	done := make(chan struct{})
	go func() {
		defer close(done)
		complete(t, ts.URL, longPrompt("z", 9), nil) // decodes for ~10ms
	}()
	waitGauges(t, s, 1, 0)
	resp := post(t, ts.URL, "/reset_prefix_cache", "", nil)
	resp.Body.Close()
	<-done
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("status %d, want 409", resp.StatusCode)
	}
}

func TestCacheMetrics(t *testing.T) {
	_, ts := startServer(t, Options{BlockSize: 4, NumBlocks: 100})
	prompt := longPrompt("m", 9)
	complete(t, ts.URL, prompt, nil)
	complete(t, ts.URL, prompt, nil)
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`vllm:cache_config_info{block_size="4",enable_prefix_caching="True",num_gpu_blocks="100"} 1`,
		"vllm:prefix_cache_queries_total 18",
		"vllm:prefix_cache_hits_total 8",
		"vllm:kv_cache_usage_perc 0",
	} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestChunkedPrefillStoresPerStep(t *testing.T) {
	s, url := eventServer(t, Options{PrefillChunk: 4})
	sub := subscribe(t, s, url)
	complete(t, url, longPrompt("c", 13), nil) // 13 tokens: steps 4+4+4+1
	var stored [][]uint64
	for len(stored) < 3 {
		_, b := recvBatch(t, sub)
		if b.Events[0].Kind == wire.KindBlockStored {
			stored = append(stored, b.Events[0].BlockHashes)
		}
	}
	if h := s.Engine().CacheState().Hashes(); len(h) != 3 || stored[2][0] != h[2] {
		t.Fatalf("stored per step %v, cache %v", stored, h)
	}
}
