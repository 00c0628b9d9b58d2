package fleet

import (
	"fmt"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/index/ttl"
)

// Policy names, in report order.
const (
	PolicyLoad      = "load"
	PolicyConfirmed = "confirmed"
	PolicyStatic05  = "static-0.5s"
	PolicyStatic2   = "static-2s"
	PolicyStatic5   = "static-5s"
	PolicyAdvised   = "advised"
	PolicyAdaptive  = "adaptive"
	// PolicyAdaptive5 is adaptive mode started at maxStale (static 5s)
	// instead of the default 2s: it trusts predictions for the longest
	// accepted window until advice pulls the TTL down.
	PolicyAdaptive5 = "adaptive-from-5s"
	PolicyOracle    = "oracle"
	// policyAdvise is the measuring run before an advised one; not a row.
	policyAdvise = "advise-measure"
)

// Policies lists every policy in report order.
var Policies = []string{PolicyLoad, PolicyConfirmed, PolicyStatic05, PolicyStatic2, PolicyStatic5,
	PolicyAdvised, PolicyAdaptive, PolicyAdaptive5, PolicyOracle}

// FindPolicies checks names (all policies when empty) and returns them in
// report order.
func FindPolicies(names []string) ([]string, error) {
	if len(names) == 0 {
		return Policies, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		known := false
		for _, p := range Policies {
			known = known || p == n
		}
		if !known {
			return nil, fmt.Errorf("finding policy %q: %w", n, ErrUnknown)
		}
		want[n] = true
	}
	var out []string
	for _, p := range Policies {
		if want[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// Tuning is what every controller-backed policy runs with: windows sized
// for runs of a minute or two (the defaults, minSamples 100 and a 10 s
// interval, are sized for production hours).
type Tuning struct {
	MinSamples     int
	Interval, Step time.Duration
}

// DefaultTuning is compare's: minSamples 50, advice every 1 s, adaptive
// moves of at most 250 ms.
var DefaultTuning = Tuning{MinSamples: 50, Interval: time.Second, Step: 250 * time.Millisecond}

// Grace is the index's grace in every run (late confirmations are
// reported as early expiries within it).
const Grace = 2 * time.Second

// ttlConfig is the controller configuration of policy; ok is false for
// the policies that run without a controller (load, confirmed, oracle).
// advised is the TTL an advise run measured.
func ttlConfig(policy string, advised time.Duration, t Tuning) (ttl.Config, bool) {
	c := ttl.Config{MinSamples: t.MinSamples, Interval: api.Duration(t.Interval)}
	switch policy {
	case PolicyStatic05:
		c.Static = api.Duration(500 * time.Millisecond)
	case PolicyStatic2:
		c.Static = api.Duration(2 * time.Second)
	case PolicyStatic5:
		c.Static = api.Duration(5 * time.Second)
	case PolicyAdvised:
		c.Static = api.Duration(advised)
	case PolicyAdaptive:
		c.Mode, c.Step = ttl.ModeAdaptive, api.Duration(t.Step)
	case PolicyAdaptive5:
		c.Mode, c.Step, c.Static = ttl.ModeAdaptive, api.Duration(t.Step), api.Duration(ttl.DefaultMaxStale)
	case policyAdvise:
		c.Mode = ttl.ModeAdvise
	default:
		return ttl.Config{}, false
	}
	return c, true
}
