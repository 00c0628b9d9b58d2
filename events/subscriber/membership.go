package subscriber

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
)

// AnyEndpoint lists the prefixes that admit every endpoint to heartbeat
// membership, for Config.HeartbeatMembership.
var AnyEndpoint = []string{"0.0.0.0/0", "::/0"}

// validateMembership checks Config.HeartbeatMembership.
func validateMembership(cidrs []string) error {
	var errs []error
	for _, s := range cidrs {
		if _, err := netip.ParsePrefix(s); err != nil {
			errs = append(errs, fmt.Errorf("events.heartbeatMembership: %w", err))
		}
	}
	return errors.Join(errs...)
}

// admission decides whether a message for (model, endpoint) may touch the
// router's state: a configured endpoint of the model always, a current
// member by Follow.Member likewise, any other only with heartbeat
// membership and an IP in one of its prefixes. Built once by New; read only
// by the apply goroutine.
type admission struct {
	cidrs  []netip.Prefix
	known  map[string][]string // model -> configured endpoints
	member func(model, endpoint string) bool
}

func newAdmission(cidrs []string, known map[string][]string, member func(model, endpoint string) bool) admission {
	a := admission{known: known, member: member}
	for _, s := range cidrs {
		p, _ := netip.ParsePrefix(s) // checked by Validate
		a.cidrs = append(a.cidrs, p.Masked())
	}
	return a
}

// admits reports whether endpoint may speak for model.
func (a admission) admits(model, endpoint string) bool {
	if slices.Contains(a.known[model], endpoint) || (a.member != nil && a.member(model, endpoint)) {
		return true
	}
	if len(a.cidrs) == 0 {
		return false
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

// membershipMode names the mode in logs.
func membershipMode(cidrs []string) string {
	if len(cidrs) == 0 {
		return "static"
	}
	return "heartbeat"
}
