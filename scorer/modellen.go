package scorer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"
)

// A pool whose configuration leaves maxModelLen unset learns it from its
// engines: vLLM's and SGLang's OpenAI servers list each served model with its
// max_model_len at GET /v1/models. The learned value bounds tokenizer work
// exactly as a configured one does (promptlimit.go); a configured value
// always wins and is never asked for.

// Timing of the /v1/models fetches: at start, then every modelLenRefresh
// once a pool's value is known, every modelLenRetry while it is not. Each
// fetch asks at most modelLenTries endpoints, each within modelLenTimeout,
// and reads at most modelLenMaxBytes of the answer.
const (
	modelLenRefresh  = 10 * time.Minute
	modelLenRetry    = 30 * time.Second
	modelLenTimeout  = 2 * time.Second
	modelLenTries    = 3
	modelLenMaxBytes = 1 << 20
)

// learnedLen is a pool's max_model_len learned from its engines; 0 while
// unknown. Safe for concurrent use.
type learnedLen struct{ n atomic.Int64 }

// limitOf is the pool's prompt limit now: the configured one, else one
// from the learned max_model_len, else the default bound.
func (pl *pool) limitOf() promptLimit {
	if pl.limit.maxTokens > 0 {
		return pl.limit
	}
	if n := pl.learned.n.Load(); n > 0 {
		return newPromptLimit(int(n))
	}
	return pl.limit
}

// modelsResponse is the part of /v1/models this reads.
type modelsResponse struct {
	Data []struct {
		ID          string `json:"id"`
		MaxModelLen int    `json:"max_model_len"`
	} `json:"data"`
}

// errNoModelLen reports a /v1/models answer without a usable max_model_len.
var errNoModelLen = errors.New("no max_model_len in /v1/models")

// FetchMaxModelLen asks one engine (host:port) for its max_model_len from
// GET /v1/models: the smallest one listed (an engine lists its base model and
// its adapters, which share it). It waits at most a few seconds.
func FetchMaxModelLen(ctx context.Context, client *http.Client, endpoint string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, modelLenTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+endpoint+"/v1/models", nil)
	if err != nil {
		return 0, fmt.Errorf("asking %s for max_model_len: %w", endpoint, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("asking %s for max_model_len: %w", endpoint, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("asking %s for max_model_len: status %d", endpoint, resp.StatusCode)
	}
	var m modelsResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, modelLenMaxBytes)).Decode(&m); err != nil {
		return 0, fmt.Errorf("asking %s for max_model_len: decoding: %w", endpoint, err)
	}
	n := 0
	for _, d := range m.Data {
		if d.MaxModelLen > 0 && (n == 0 || d.MaxModelLen < n) {
			n = d.MaxModelLen
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("asking %s: %w", endpoint, errNoModelLen)
	}
	return n, nil
}

// learnModelLen refreshes pl's learned value from up to modelLenTries of its
// endpoints and reports whether it is known afterwards. A failed refresh
// keeps the value learned before.
func (s *Scorer) learnModelLen(ctx context.Context, client *http.Client, pl *pool) bool {
	_, endpoints, err := s.pools.lookupPool(pl)
	if err != nil || len(endpoints) == 0 {
		return pl.learned.n.Load() > 0
	}
	start := rand.IntN(len(endpoints)) // spread the asking over the pool
	for i := range min(modelLenTries, len(endpoints)) {
		n, err := FetchMaxModelLen(ctx, client, endpoints[(start+i)%len(endpoints)])
		if err != nil {
			s.opts.Metrics.modelLenFetch(fetchResult(err))
			continue
		}
		pl.learned.n.Store(int64(n))
		s.opts.Metrics.maxModelLen(pl.name, n)
		s.opts.Metrics.modelLenFetch("ok")
		return true
	}
	return pl.learned.n.Load() > 0
}

func fetchResult(err error) string {
	if errors.Is(err, errNoModelLen) {
		return "missing"
	}
	return "error"
}

// watchModelLen keeps the learned max_model_len of every pool without a
// configured one until ctx ends.
func (s *Scorer) watchModelLen(ctx context.Context, client *http.Client) {
	pools := s.pools.unconfiguredLen()
	if len(pools) == 0 {
		return
	}
	for {
		wait := modelLenRefresh
		for _, pl := range pools {
			if !s.learnModelLen(ctx, client, pl) {
				wait = modelLenRetry
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// unconfiguredLen lists the pools whose maxModelLen is not configured.
func (p *Pools) unconfiguredLen() []*pool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out []*pool
	for _, pl := range p.byName {
		if pl.limit.maxTokens == 0 {
			out = append(out, pl)
		}
	}
	return out
}

// lookupPool returns pl's current endpoint snapshot.
func (p *Pools) lookupPool(pl *pool) (string, []string, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return pl.name, pl.endpoints, nil
}
