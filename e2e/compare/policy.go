package main

import (
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/index/ttl"
)

// Policy names, in report order.
const (
	policyLoad      = "load"
	policyConfirmed = "confirmed"
	policyStatic    = "static-2s"
	policyAdvised   = "advised"
	policyAdaptive  = "adaptive"
	policyOracle    = "oracle"
)

// policyNames lists every policy in report order.
var policyNames = []string{policyLoad, policyConfirmed, policyStatic, policyAdvised, policyAdaptive, policyOracle}

// noSpeculation is the TTL of the confirmed-only policy. The router has no
// switch that turns speculation off, but a static TTL of one nanosecond makes
// every prediction expire before any later request can look it up, so only
// confirmed blocks ever score. Its endings counters then count those instant
// expiries, which is why the report leaves that policy's stale column blank.
const noSpeculation = time.Nanosecond

// adaptiveTuning makes the adaptive controller act within one short run: the
// defaults (recompute every 10s, move 100ms a step) are sized for production
// hours, not for a run of a few dozen seconds.
type adaptiveTuning struct {
	Interval time.Duration
	Step     time.Duration
}

// routerPlan is what one run needs from the router: its TTL configuration
// and whether the pool routes on prefixes at all. An oracle run has no
// router (Direct).
type routerPlan struct {
	Prefix bool
	TTL    ttl.Config
	Direct bool
}

// planFor returns policy's router plan. advised is the TTL measured by the
// scenario's advise run (used by the advised policy only); minSamples sizes
// the controller's windows for short runs.
func planFor(policy string, advised time.Duration, minSamples int, tune adaptiveTuning) routerPlan {
	tc := ttl.Config{MinSamples: minSamples}
	switch policy {
	case policyLoad:
		return routerPlan{TTL: tc}
	case policyConfirmed:
		tc.Static = api.Duration(noSpeculation)
	case policyStatic:
		tc.Static = api.Duration(ttl.DefaultStatic)
	case policyAdvised:
		tc.Static = api.Duration(advised)
	case policyAdaptive:
		tc.Mode = ttl.ModeAdaptive
		tc.Interval, tc.Step = api.Duration(tune.Interval), api.Duration(tune.Step)
	case policyOracle:
		return routerPlan{Direct: true}
	case modeAdvise:
		tc.Mode = ttl.ModeAdvise
	}
	return routerPlan{Prefix: true, TTL: tc}
}

// modeAdvise is the measuring run before the advised policy; it is not a
// row of the report.
const modeAdvise = "advise-measure"

// maxTTL is the longest a prediction of plan may live, so the run waits that
// long before reading stale expiries.
func (p routerPlan) maxTTL() time.Duration {
	c := p.TTL.WithDefaults()
	if c.Mode == ttl.ModeAdaptive {
		return c.MaxStale.D()
	}
	return c.Static.D()
}

// findPolicies returns the policies named in names, in report order.
func findPolicies(names []string) ([]string, error) {
	return pick(policyNames, names, func(s string) string { return s }, errUnknownPolicy)
}
