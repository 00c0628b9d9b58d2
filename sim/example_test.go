package sim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/warmroute/warmroute/sim"
)

// A simulator behind httptest answers like an OpenAI server; its text is a
// function of the request, so tests can compare answers across instances.
func Example() {
	s, err := sim.New(sim.Options{ID: "sim-a", Models: []string{"llama"}, PromptTokensDetails: true})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	body := `{"model":"llama","prompt":"Hello there","max_tokens":4}`
	resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Text         string `json:"text"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		panic(err)
	}
	fmt.Println(resp.StatusCode, resp.Header.Get("x-warmroute-served-by"))
	fmt.Printf("%q %s\n", out.Choices[0].Text, out.Choices[0].FinishReason)
	fmt.Println(string(out.Usage))
	// Output:
	// 200 sim-a
	// " router all on signal" length
	// {"prompt_tokens":2,"completion_tokens":4,"total_tokens":6,"prompt_tokens_details":{"cached_tokens":0}}
}

// The prefix cache: a repeated prompt is served from cached full blocks
// (at most prompt_len-1 tokens, a multiple of the block size), and the
// engine's true cache content is readable for comparison with a router's
// index.
func Example_prefixCache() {
	seed := int64(1)
	s, err := sim.New(sim.Options{Models: []string{"llama"}, PromptTokensDetails: true, BlockSize: 4, EngineSeed: &seed})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	body := `{"model":"llama","prompt":"one two three four five six seven eight nine ten","max_tokens":1}`
	for range 2 {
		resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		var out struct {
			Usage struct {
				PromptTokens        int `json:"prompt_tokens"`
				PromptTokensDetails struct {
					CachedTokens int `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			} `json:"usage"`
		}
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		fmt.Println(out.Usage.PromptTokens, out.Usage.PromptTokensDetails.CachedTokens)
	}
	fmt.Println(len(s.Engine().CacheState().Blocks), "blocks cached")
	// Output:
	// 10 0
	// 10 8
	// 2 blocks cached
}
