package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/warmroute/warmroute/sim"
)

// cacheChain indexes one simulator's true cache by (parent hash, block
// tokens), the identity a block has in its hash chain, so a prompt's blocks
// can be walked from the root without knowing the engine's hash seed.
type cacheChain struct {
	blockSize int
	next      map[string]uint64
}

// newCacheChain indexes st. LoRA blocks are left out: the workload uses the
// base model only.
func newCacheChain(st sim.CacheState) cacheChain {
	c := cacheChain{blockSize: st.BlockSize, next: make(map[string]uint64, len(st.Blocks))}
	for _, b := range st.Blocks {
		if b.LoRAName != "" {
			continue
		}
		c.next[chainKey(b.ParentHash, b.TokenIDs)] = b.Hash
	}
	return c
}

func chainKey(parent *uint64, tokens []int) string {
	buf := make([]byte, 0, 9+4*len(tokens))
	if parent != nil {
		buf = binary.BigEndian.AppendUint64(append(buf, 1), *parent)
	} else {
		buf = append(buf, 0)
	}
	for _, t := range tokens {
		buf = binary.BigEndian.AppendUint32(buf, uint32(t))
	}
	return string(buf)
}

// cachedTokens is how many of tokens a request would find cached: the
// longest run of full blocks present from the root, capped as the engine
// caps it so that at least one prompt token is computed.
func (c cacheChain) cachedTokens(tokens []int) int {
	if c.blockSize <= 0 {
		return 0
	}
	var parent *uint64
	n := 0
	for n+c.blockSize <= len(tokens) {
		h, ok := c.next[chainKey(parent, tokens[n:n+c.blockSize])]
		if !ok {
			break
		}
		parent = &h
		n += c.blockSize
	}
	if limit := (len(tokens) - 1) / c.blockSize * c.blockSize; n > limit && limit >= 0 {
		n = limit
	}
	return n
}

// oracle picks, per request, the simulator that truly holds the longest
// cached prefix, breaking ties by the fewest requests it has in flight. It
// is safe for concurrent use.
type oracle struct {
	client *http.Client
	sims   []string // host:port
	mu     sync.Mutex
	flight []int
}

func newOracle(c *http.Client, sims []string) *oracle {
	return &oracle{client: c, sims: sims, flight: make([]int, len(sims))}
}

// pick returns the index of the simulator to send prompt to and marks one
// more request in flight there; the caller calls done with it afterwards.
func (o *oracle) pick(ctx context.Context, prompt string) (int, error) {
	body, err := json.Marshal(map[string]any{"model": model, "prompt": prompt})
	if err != nil {
		return 0, fmt.Errorf("encoding tokenize request: %w", err)
	}
	return o.pickFor(ctx, body)
}

// pickFor is pick for the prompt of a /tokenize request body: a
// completion prompt, or a chat's messages and tools.
func (o *oracle) pickFor(ctx context.Context, tokenizeBody []byte) (int, error) {
	tokens, err := o.tokenize(ctx, tokenizeBody)
	if err != nil {
		return 0, err
	}
	cached := make([]int, len(o.sims))
	for i, s := range o.sims {
		st, err := o.cache(ctx, s)
		if err != nil {
			return 0, err
		}
		cached[i] = newCacheChain(st).cachedTokens(tokens)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	best := 0
	for i := range cached {
		if cached[i] > cached[best] || cached[i] == cached[best] && o.flight[i] < o.flight[best] {
			best = i
		}
	}
	o.flight[best]++
	return best, nil
}

func (o *oracle) done(i int) {
	o.mu.Lock()
	o.flight[i]--
	o.mu.Unlock()
}

func (o *oracle) tokenize(ctx context.Context, body []byte) ([]int, error) {
	var out struct {
		Tokens []int `json:"tokens"`
	}
	if err := callJSON(ctx, o.client, http.MethodPost, "http://"+o.sims[0]+"/tokenize", body, &out); err != nil {
		return nil, fmt.Errorf("tokenizing prompt: %w", err)
	}
	return out.Tokens, nil
}

func (o *oracle) cache(ctx context.Context, addr string) (sim.CacheState, error) {
	var st sim.CacheState
	if err := callJSON(ctx, o.client, http.MethodGet, "http://"+addr+"/debug/cache", nil, &st); err != nil {
		return st, fmt.Errorf("reading cache of %s: %w", addr, err)
	}
	return st, nil
}

// callJSON sends body (may be nil) and decodes a 200 answer into out.
func callJSON(ctx context.Context, c *http.Client, method, url string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return &statusError{Code: resp.StatusCode, Body: string(msg)}
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
