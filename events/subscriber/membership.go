package subscriber

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
)

// Membership modes: who decides which endpoints a router routes to.
const (
	// MembershipStatic trusts configuration only: heartbeats and batches
	// attach liveness, load and cache state to the configured endpoints of
	// their model, and a message for any other endpoint is dropped and
	// counted (result unknown_endpoint).
	MembershipStatic = "static"
	// MembershipHeartbeat lets a relay's heartbeat add its endpoint to its
	// model's pool (discovery), optionally only from MembershipConfig.CIDRs.
	// Use it only on a bus where publishing is authenticated and limited.
	MembershipHeartbeat = "heartbeat"
)

// MembershipConfig says which endpoints event messages may speak for.
type MembershipConfig struct {
	// Mode is MembershipStatic (default) or MembershipHeartbeat.
	Mode string `json:"mode,omitempty"`
	// CIDRs limit heartbeat membership to endpoints whose IP is in one of
	// them; empty admits any endpoint. Configured endpoints are always
	// admitted.
	CIDRs []string `json:"cidrs,omitempty"`
}

// Validate reports every problem in c, joined, or nil.
func (c MembershipConfig) Validate() error {
	var errs []error
	if c.Mode != "" && c.Mode != MembershipStatic && c.Mode != MembershipHeartbeat {
		errs = append(errs, fmt.Errorf("events.membership.mode %q: want %s or %s", c.Mode,
			MembershipStatic, MembershipHeartbeat))
	}
	if len(c.CIDRs) > 0 && c.Mode != MembershipHeartbeat {
		errs = append(errs, errors.New("events.membership.cidrs limit heartbeat membership; set mode heartbeat"))
	}
	for _, s := range c.CIDRs {
		if _, err := netip.ParsePrefix(s); err != nil {
			errs = append(errs, fmt.Errorf("events.membership.cidrs: %w", err))
		}
	}
	return errors.Join(errs...)
}

// admission decides whether a message for (model, endpoint) may touch the
// router's state. Built once by New; read only by the apply goroutine.
type admission struct {
	heartbeat bool
	cidrs     []netip.Prefix
	known     map[string][]string // model -> configured endpoints
}

func newAdmission(c MembershipConfig, known map[string][]string) admission {
	a := admission{heartbeat: c.Mode == MembershipHeartbeat, known: known}
	for _, s := range c.CIDRs {
		p, _ := netip.ParsePrefix(s) // checked by Validate
		a.cidrs = append(a.cidrs, p.Masked())
	}
	return a
}

// admits reports whether endpoint may speak for model.
func (a admission) admits(model, endpoint string) bool {
	if slices.Contains(a.known[model], endpoint) {
		return true
	}
	if !a.heartbeat {
		return false
	}
	if len(a.cidrs) == 0 {
		return true
	}
	host, _, err := net.SplitHostPort(endpoint)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	return slices.ContainsFunc(a.cidrs, func(p netip.Prefix) bool { return p.Contains(ip) })
}
