package scorer

import "slices"

// dynamicEndpoints records, per pool, the endpoints that discovery added, so
// that discovery can only ever take away what it added: an endpoint listed in
// configuration stays even when its relay goes quiet. Guarded by Pools.mu;
// the zero value is empty and ready.
type dynamicEndpoints map[*pool]map[string]struct{}

func (d *dynamicEndpoints) add(pl *pool, endpoint string) {
	if *d == nil {
		*d = dynamicEndpoints{}
	}
	if (*d)[pl] == nil {
		(*d)[pl] = map[string]struct{}{}
	}
	(*d)[pl][endpoint] = struct{}{}
}

// take forgets endpoint and reports whether discovery had added it.
func (d dynamicEndpoints) take(pl *pool, endpoint string) bool {
	if _, ok := d[pl][endpoint]; !ok {
		return false
	}
	delete(d[pl], endpoint)
	return true
}

// AddEndpoint adds a discovered endpoint to the pool serving model, creating
// a pool named after the model when none serves it (a default pool does not
// count: the model's own endpoints are a better answer). It reports whether
// the endpoint is new to the pool; an endpoint already present, static or
// dynamic, is left as it is.
func (p *Pools) AddEndpoint(model, endpoint string) bool {
	if model == "" || endpoint == "" {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pl := p.byModel[model]
	if pl == nil {
		pl = &pool{name: model}
		p.byModel[model] = pl
		if p.byName[model] == nil {
			p.byName[model] = pl
		}
	}
	if slices.Contains(pl.endpoints, endpoint) {
		return false
	}
	// endpoints is an immutable snapshot handed to readers: replace it.
	pl.endpoints = sortedUnique(append(slices.Clone(pl.endpoints), endpoint))
	p.dynamic.add(pl, endpoint)
	return true
}

// RemoveEndpoint removes an endpoint that AddEndpoint added to the pool
// serving model. Endpoints from configuration are never removed. A pool
// created by discovery stays, empty, so its model keeps answering "no
// eligible endpoint" rather than "unknown model" while its pods return.
// It reports whether an endpoint was removed.
func (p *Pools) RemoveEndpoint(model, endpoint string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	pl := p.byModel[model]
	if pl == nil || !p.dynamic.take(pl, endpoint) {
		return false
	}
	pl.endpoints = slices.DeleteFunc(slices.Clone(pl.endpoints), func(e string) bool { return e == endpoint })
	return true
}
