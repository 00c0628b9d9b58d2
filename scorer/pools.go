package scorer

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/warmroute/warmroute/index"
)

// Pools maps model names and aliases to pools of endpoints. Endpoints can be
// replaced at run time (discovery); readers get an immutable snapshot.
// Safe for concurrent use; build it with NewPools.
type Pools struct {
	mu          sync.RWMutex
	byModel     map[string]*pool
	byName      map[string]*pool
	defaultPool *pool
	// implicit is the single configured pool, used for requests that name no
	// model when no default is configured.
	implicit *pool
	// dynamic holds the endpoints discovery added (membership.go).
	dynamic dynamicEndpoints
}

type pool struct {
	name      string
	endpoints []string // sorted; replaced, never mutated
	adapters  map[string]bool
	limit     promptLimit // configured
	learned   learnedLen  // from the engines when not configured (modellen.go)
	// roles of endpoints that do not serve both (roles.go); nil for none.
	roles atomic.Pointer[poolRoles]
	split atomic.Pointer[pdSplit] // the last P/D candidate split (pd.go)
}

// NewPools builds the registry from configuration. The configuration is
// assumed to have passed Config.Validate.
func NewPools(cfg []PoolConfig, defaultPool string) *Pools {
	p := &Pools{byModel: map[string]*pool{}, byName: map[string]*pool{}}
	for _, pc := range cfg {
		pl := &pool{name: pc.Name, endpoints: sortedUnique(pc.Endpoints), adapters: map[string]bool{},
			limit: newPromptLimit(pc.MaxModelLen)}
		p.byName[pc.Name] = pl
		pl.setRoles(pc.Roles)
		for _, m := range append([]string{pc.Name}, pc.Models...) {
			p.byModel[m] = pl
		}
		for _, a := range pc.LoRAAdapters {
			pl.adapters[a] = true
			if p.byModel[a] == nil {
				p.byModel[a] = pl // an adapter is requested by its name
			}
		}
	}
	p.defaultPool = p.byName[defaultPool]
	if len(cfg) == 1 {
		p.implicit = p.byName[cfg[0].Name]
	}
	return p
}

// Lookup returns the pool name and endpoint snapshot for a model. An empty
// model selects the default pool (or the only pool). The returned slice must
// not be modified.
func (p *Pools) Lookup(model string) (name string, endpoints []string, err error) {
	pl, endpoints, err := p.lookup(model)
	if err != nil {
		return "", nil, err
	}
	return pl.name, endpoints, nil
}

func (p *Pools) lookup(model string) (*pool, []string, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	pl := p.byModel[model]
	switch {
	case pl != nil:
	case p.defaultPool != nil:
		pl = p.defaultPool
	case model == "" && p.implicit != nil:
		pl = p.implicit
	default:
		if model == "" {
			return nil, nil, fmt.Errorf("request names no model and no default pool is configured: %w", ErrUnknownModel)
		}
		return nil, nil, fmt.Errorf("model %q: %w", model, ErrUnknownModel)
	}
	return pl, pl.endpoints, nil
}

// Member reports whether endpoint is one of the endpoints of the pool model
// names (exactly: no default pool), as they are now.
func (p *Pools) Member(model, endpoint string) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	pl := p.byModel[model]
	if pl == nil {
		return false
	}
	_, ok := slices.BinarySearch(pl.endpoints, endpoint)
	return ok
}

// SetEndpoints replaces a pool's endpoints. It reports false when the pool does
// not exist.
func (p *Pools) SetEndpoints(poolName string, endpoints []string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	pl, ok := p.byName[poolName]
	if !ok {
		return false
	}
	pl.endpoints = sortedUnique(endpoints)
	return true
}

func sortedUnique(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

// identity is the cache identity a request keys under in pl. The model is the
// pool's name, the name relays publish the pool's events under, so aliases
// share blocks; a model naming one of the pool's adapters keys under it.
func (pl *pool) identity(req *Request) index.Identity {
	id := index.Identity{Model: pl.name, CacheSalt: req.CacheSalt}
	if pl.adapters[req.Model] {
		id.LoRA = req.Model
	}
	return id
}
