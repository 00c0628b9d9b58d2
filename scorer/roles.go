package scorer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/warmroute/warmroute/api"
)

// Role is what part of a request an endpoint serves in a prefill/decode
// (P/D) disaggregated pool. The zero value, RoleBoth, serves whole requests
// and either part.
type Role uint8

// Roles, a bounded set used as a metric label.
const (
	// RoleBoth prefills and decodes (the default, and every endpoint of a
	// pool without prefill-only endpoints).
	RoleBoth Role = iota
	// RolePrefill only prefills: it computes the prompt's KV state, which
	// the decoder pulls, and never streams a response to the client.
	RolePrefill
	// RoleDecode only decodes, after a prefiller computed the prompt.
	RoleDecode
)

// ErrUnknownRole means a role name is none of those RoleOf accepts.
var ErrUnknownRole = errors.New("unknown endpoint role")

// String names the role for logs and metric labels.
func (r Role) String() string {
	switch r {
	case RolePrefill:
		return "prefill"
	case RoleDecode:
		return "decode"
	}
	return "both"
}

// prefills reports whether r may be given a request's prefill, and decodes
// whether it may be its destination.
func (r Role) prefills() bool { return r != RoleDecode }
func (r Role) decodes() bool  { return r != RolePrefill }

// roleNames are the values RoleOf accepts: this project's three names and
// the api.RoleLabel (llm-d.ai/role) values llm-d's scheduler gives prefill and decode
// work ("prefill-decode" is its current name for both; "encode-prefill"
// workers prefill, "encode-prefill-decode" ones do everything). An empty
// value is the default, both. "encode" workers take neither part, so they
// are refused rather than guessed at.
var roleNames = map[string]Role{
	"": RoleBoth, "both": RoleBoth, "prefill-decode": RoleBoth, "encode-prefill-decode": RoleBoth,
	"prefill": RolePrefill, "encode-prefill": RolePrefill,
	"decode": RoleDecode,
}

// RoleOf parses a role name or llm-d.ai/role label value.
func RoleOf(name string) (Role, error) {
	if r, ok := roleNames[name]; ok {
		return r, nil
	}
	return RoleBoth, fmt.Errorf("%w %q: want prefill, decode or both (or llm-d's prefill-decode, encode-prefill, encode-prefill-decode)", ErrUnknownRole, name)
}

// MarshalText writes the role's name, so roles read and write as strings.
func (r Role) MarshalText() ([]byte, error) {
	if r > RoleDecode {
		return nil, fmt.Errorf("%w %d", ErrUnknownRole, r)
	}
	return []byte(r.String()), nil
}

// UnmarshalText parses a name RoleOf accepts.
func (r *Role) UnmarshalText(b []byte) error {
	v, err := RoleOf(string(b))
	*r = v
	return err
}

// PoolEndpoint is one entry of a pool's endpoints in the file: "ip:port",
// or {address: "ip:port", role: prefill} for a P/D pool. PoolConfig reads
// and writes its entries through it.
type PoolEndpoint struct {
	Address string `json:"address"`
	Role    Role   `json:"role,omitempty"`
}

func (e *PoolEndpoint) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &e.Address); err == nil {
		return nil
	}
	type object PoolEndpoint // without this method
	var o object
	if err := strictJSON(b, &o); err != nil {
		return fmt.Errorf("pool endpoint: want \"ip:port\" or {address, role}: %w", err)
	}
	if o.Address == "" {
		return errors.New("pool endpoint: address is required")
	}
	*e = PoolEndpoint(o)
	return nil
}

func (e PoolEndpoint) MarshalJSON() ([]byte, error) {
	if e.Role == RoleBoth {
		return json.Marshal(e.Address)
	}
	type object PoolEndpoint
	return json.Marshal(object(e))
}

// strictJSON decodes b into v refusing unknown fields, as the file's
// decoder does everywhere else.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// UnmarshalJSON reads a pool whose endpoints may carry roles, splitting
// them into Endpoints and Roles; unknown fields are refused.
func (p *PoolConfig) UnmarshalJSON(b []byte) error {
	var aux poolFile
	if err := strictJSON(b, &aux); err != nil {
		return err
	}
	*p = PoolConfig(aux.poolPlain)
	p.Endpoints, p.Roles = nil, nil
	for _, e := range aux.Endpoints {
		p.Endpoints = append(p.Endpoints, e.Address)
		if e.Role != RoleBoth {
			if p.Roles == nil {
				p.Roles = map[string]Role{}
			}
			p.Roles[e.Address] = e.Role
		}
	}
	return nil
}

// poolPlain is PoolConfig without its JSON methods.
type poolPlain PoolConfig

// poolFile is a pool as the file lays it out: endpoints are entries.
type poolFile struct {
	poolPlain
	Endpoints []PoolEndpoint `json:"endpoints,omitempty"`
}

// FileSchema gives the configuration decoder the file's layout of a pool,
// so a bad key or value inside one is reported at its line.
func (PoolConfig) FileSchema() any { return poolFile{} }

// MarshalJSON writes the pool as UnmarshalJSON reads it.
func (p PoolConfig) MarshalJSON() ([]byte, error) {
	aux := poolFile{poolPlain: poolPlain(p)}
	for _, ep := range p.Endpoints {
		aux.Endpoints = append(aux.Endpoints, PoolEndpoint{Address: ep, Role: p.Roles[ep]})
	}
	return json.Marshal(aux)
}

// validateRoles checks a pool's roles name its endpoints with known roles.
func (p PoolConfig) validateRoles() []error {
	var errs []error
	if len(p.Roles) > 0 && p.InferencePool != "" {
		errs = append(errs, fmt.Errorf("roles come from the pods' %s label with inferencePool, not from endpoints", api.RoleLabel))
	}
	for _, ep := range slices.Sorted(maps.Keys(p.Roles)) {
		if !slices.Contains(p.Endpoints, ep) {
			errs = append(errs, fmt.Errorf("role for %q, which is not one of the pool's endpoints", ep))
		}
		if r := p.Roles[ep]; r > RoleDecode {
			errs = append(errs, fmt.Errorf("endpoint %q: %w %d", ep, ErrUnknownRole, r))
		}
	}
	return errs
}

// isPD reports whether roles make a P/D pool: one with a prefill-only
// endpoint. Decode-only endpoints alone do not: with nobody to prefill for
// them, they prefill themselves.
func isPD(roles map[string]Role) bool {
	for _, r := range roles {
		if r == RolePrefill {
			return true
		}
	}
	return false
}

// setRoles replaces pl's roles with a copy of roles (nil when every
// endpoint serves both).
func (pl *pool) setRoles(roles map[string]Role) {
	var m map[string]Role
	for ep, r := range roles {
		if r != RoleBoth {
			if m == nil {
				m = map[string]Role{}
			}
			m[ep] = r
		}
	}
	if m == nil {
		pl.roles.Store(nil)
		return
	}
	pl.roles.Store(&poolRoles{m: m, pd: isPD(m)})
}

// poolRoles is an immutable snapshot of a pool's roles.
type poolRoles struct {
	m  map[string]Role
	pd bool // isPD(m), decided once
}

// pdRoles returns pl's roles when it is a P/D pool, else nil.
func (pl *pool) pdRoles() map[string]Role {
	if r := pl.roles.Load(); r != nil && r.pd {
		return r.m
	}
	return nil
}

// rolesOf returns pl's roles snapshot (nil: every endpoint serves both),
// which must not be modified.
func (pl *pool) rolesOf() map[string]Role {
	if r := pl.roles.Load(); r != nil {
		return r.m
	}
	return nil
}

// SetRoles replaces the roles of a pool's endpoints (as Kubernetes
// membership reads them from the pods' labels); endpoints roles omits
// serve both. It reports false when the pool does not exist.
func (p *Pools) SetRoles(poolName string, roles map[string]Role) bool {
	p.mu.RLock()
	pl, ok := p.byName[poolName]
	p.mu.RUnlock()
	if ok {
		pl.setRoles(roles)
	}
	return ok
}

// Roles returns the roles of a pool's endpoints other than both, for the
// admin API and tests; nil for an unknown pool or one without roles.
func (p *Pools) Roles(poolName string) map[string]Role {
	p.mu.RLock()
	pl := p.byName[poolName]
	p.mu.RUnlock()
	if pl == nil {
		return nil
	}
	return maps.Clone(pl.rolesOf())
}
