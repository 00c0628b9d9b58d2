package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// vllmStreamTokens is the first request's output length in the warm check:
// with ignore_eos the tiny model streams for seconds, so the repeat is sent
// while it runs.
const vllmStreamTokens = 600

// vllmStream is a streaming completion being read.
type vllmStream struct {
	d      decision
	done   chan struct{} // closed when the stream ended
	ended  time.Time
	prompt int // usage.prompt_tokens of the final chunk
	cached int
	chunks int
	err    error
}

// startVLLMStream posts a streaming completion and returns once the first
// text chunk arrived (the prompt is computed); the rest is read in the
// background.
func startVLLMStream(t *testing.T, url, prompt string) *vllmStream {
	t.Helper()
	body := mustJSON(t, map[string]any{"model": model, "prompt": prompt, "max_tokens": vllmStreamTokens,
		"ignore_eos": true, "stream": true, "stream_options": map[string]any{"include_usage": true}})
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("streaming completion: %s", resp.Status)
	}
	s := &vllmStream{d: parseDecision(resp.Header.Get(decisionHeader)), done: make(chan struct{})}
	br := bufio.NewReader(resp.Body)
	if err := s.next(br); err != nil {
		resp.Body.Close()
		t.Fatalf("first chunk: %v", err)
	}
	go func() {
		defer close(s.done)
		defer resp.Body.Close()
		for s.err == nil && s.chunks >= 0 {
			s.err = s.next(br)
		}
		s.ended = time.Now()
	}()
	return s
}

// next reads one SSE event; at [DONE] it sets chunks to -1.
func (s *vllmStream) next(br *bufio.Reader) error {
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return fmt.Errorf("stream ended without [DONE]: %w", err)
		}
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			s.chunks = -1
			return nil
		}
		var c struct {
			Usage *struct {
				PromptTokens        int `json:"prompt_tokens"`
				PromptTokensDetails *struct {
					CachedTokens int `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return fmt.Errorf("chunk: %w", err)
		}
		if c.Usage != nil {
			s.prompt = c.Usage.PromptTokens
			if c.Usage.PromptTokensDetails != nil {
				s.cached = c.Usage.PromptTokensDetails.CachedTokens
			}
		}
		s.chunks++
		return nil
	}
}

// wait waits for the stream's end and fails t on a broken stream.
func (s *vllmStream) wait(t *testing.T) {
	t.Helper()
	<-s.done
	if s.err != nil {
		t.Fatal(s.err)
	}
}

var endpointRE = regexp.MustCompile(`endpoint=([^;]+)`)

func decisionEndpoint(d decision) string {
	if m := endpointRE.FindStringSubmatch(d.raw); m != nil {
		return m[1]
	}
	return ""
}

// warmBeforeFinish sends a long prompt as a long stream and repeats it
// while the stream runs, twice: first with both relays' event paths held
// (the repeat can rest only on the router's speculative prediction), then
// with events flowing as they do (the first's blocks are confirmed within
// the prefill). Each repeat must go to the engine streaming the first and
// vLLM's cached_tokens must equal the router's match; once the held events
// arrive, the repeat rests on the confirmation with the same cached_tokens.
func (p *vllmPair) warmBeforeFinish(t *testing.T) {
	url := p.f.Envoy.URL("/v1/completions")
	held := p.repeatWhileStreaming(t, url, "held", true)
	if held.d.basis != "speculative" || held.d.confirmed != 0 {
		t.Errorf("repeat with events held: %s, want a speculative match alone", held.decision)
	}
	confirmed := waitWarm(t, url, p.warm)
	if got, want := decisionEndpoint(confirmed.d), p.engines[p.warmOn].Sim.Addr; got != want {
		t.Errorf("confirmed repeat went to %s, the first to %s", got, want)
	}
	p.checkCached(t, "after the events arrived", confirmed)
	t.Logf("after the events arrived: cached %d, %s", confirmed.cached, confirmed.decision)
	natural := p.repeatWhileStreaming(t, url, "natural", false)
	t.Logf("events flowing: the repeat routed on %s", natural.d.basis)
}

// repeatWhileStreaming streams a new long prompt, repeats it (max_tokens 1)
// while the stream runs and checks the repeat: same engine, cached_tokens
// equal to the router's match, the stream still running when the repeat
// was answered. With hold, both relays' NATS paths are blocked from before
// the stream until the repeat was answered.
func (p *vllmPair) repeatWhileStreaming(t *testing.T, url, tag string, hold bool) vllmReply {
	t.Helper()
	prompt := words(p.run+tag, 150)
	body := mustJSON(t, map[string]any{"model": model, "prompt": prompt, "max_tokens": 1})
	ids := routerIDs(t, p.local, "/v1/completions", body)
	if hold {
		for _, px := range p.f.Proxies {
			px.Block(true)
		}
	}
	first := startVLLMStream(t, url, prompt)
	second := sendVLLM(t, url, body)
	answered := time.Now()
	if hold {
		for _, px := range p.f.Proxies {
			px.Block(false)
		}
	}
	running := false
	select {
	case <-first.done:
	default:
		running = true
	}
	first.wait(t)
	target := decisionEndpoint(first.d)
	t.Logf("%s: %d prompt tokens; first %s; repeat cached %d (%s); the first still streaming when the repeat was answered: %v (it ended %s later)",
		tag, len(ids), first.d.raw, second.cached, second.decision, running, first.ended.Sub(answered).Round(time.Millisecond))
	if first.prompt != len(ids) || first.cached != 0 {
		t.Errorf("%s: first send: prompt_tokens %d (router %d), cached_tokens %d (a new prefix)", tag, first.prompt, len(ids), first.cached)
	}
	if !running {
		t.Errorf("%s: the first stream ended before the repeat was answered", tag)
	}
	if got := decisionEndpoint(second.d); got != target || target == "" {
		t.Errorf("%s: the repeat went to %q, the first to %q", tag, got, target)
	}
	p.checkCached(t, tag, second)
	p.warm, p.warmOn = body, slices.IndexFunc(p.engines, func(e *vllmEngine) bool { return e.Sim.Addr == target })
	return second
}

// checkCached: vLLM reports min(matched, (n-1) // block) whole blocks.
func (p *vllmPair) checkCached(t *testing.T, tag string, r vllmReply) {
	t.Helper()
	want := min(r.matched, (r.prompt-1)/vllmBlockSize) * vllmBlockSize
	if r.cached != want || want == 0 {
		t.Errorf("%s: vLLM cached_tokens %d, the router predicted %d (%s)", tag, r.cached, want, r.decision)
	}
}
