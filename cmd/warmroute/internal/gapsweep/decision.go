package gapsweep

import (
	"fmt"
	"strconv"
	"strings"
)

// Basis is what a routing decision rested on, as the router's decision
// header states it.
type Basis string

// Bases. Confirmed, Speculative and None are the router's own names (and its
// warmroute_scorer_decisions_total labels); Load means prefix routing was not
// used at all, Unknown that the response carried no decision header.
const (
	BasisConfirmed   Basis = "confirmed"
	BasisSpeculative Basis = "speculative"
	BasisNone        Basis = "none"
	BasisLoad        Basis = "load"
	BasisUnknown     Basis = "unknown"
)

// MetricLabel is the basis label the router counts this decision under: a
// load-only decision is counted as "none".
func (b Basis) MetricLabel() string {
	if b == BasisLoad {
		return string(BasisNone)
	}
	return string(b)
}

// Indexed reports whether the decision rested on an index match.
func (b Basis) Indexed() bool { return b == BasisConfirmed || b == BasisSpeculative }

// Decision is one parsed x-warmroute-decision header. The zero value is a
// decision with an unknown basis.
type Decision struct {
	Basis       Basis  `json:"basis"`
	Confirmed   int    `json:"confirmedBlocks"`
	Speculative int    `json:"speculativeBlocks"`
	Blocks      int    `json:"promptBlocks"`
	Endpoint    string `json:"endpoint,omitempty"`
	Because     string `json:"because,omitempty"`
}

// ParseDecision reads a header such as "basis=speculative;
// matched=4c+6s/10; endpoint=10.0.0.2:8000; score=0.81; because=longest
// prefix". Unknown keys and bare notes are skipped, so the router may add
// fields; an empty header gives BasisUnknown and no error.
func ParseDecision(h string) (Decision, error) {
	d := Decision{Basis: BasisUnknown}
	if strings.TrimSpace(h) == "" {
		return d, nil
	}
	seen := false
	for part := range strings.SplitSeq(h, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		var err error
		switch k {
		case "basis":
			d.Basis, err = parseBasis(v)
			seen = true
		case "matched":
			d.Confirmed, d.Speculative, d.Blocks, err = parseMatched(v)
		case "endpoint":
			d.Endpoint = v
		case "because":
			d.Because = v
		}
		if err != nil {
			return Decision{Basis: BasisUnknown}, fmt.Errorf("parsing decision %q: %w", h, err)
		}
	}
	if !seen {
		return Decision{Basis: BasisUnknown}, fmt.Errorf("parsing decision %q: no basis: %w", h, ErrDecisionHeader)
	}
	return d, nil
}

func parseBasis(v string) (Basis, error) {
	switch b := Basis(v); b {
	case BasisConfirmed, BasisSpeculative, BasisNone, BasisLoad:
		return b, nil
	}
	return BasisUnknown, fmt.Errorf("unknown basis %q: %w", v, ErrDecisionHeader)
}

// parseMatched reads "Cc+Ss/N": confirmed and speculative leading blocks of
// the chosen endpoint out of the prompt's N full blocks.
func parseMatched(v string) (c, s, n int, err error) {
	cs, ns, ok := strings.Cut(v, "/")
	cPart, sPart, ok2 := strings.Cut(cs, "+")
	if !ok || !ok2 || !strings.HasSuffix(cPart, "c") || !strings.HasSuffix(sPart, "s") {
		return 0, 0, 0, fmt.Errorf("matched %q: want Cc+Ss/N: %w", v, ErrDecisionHeader)
	}
	c, err1 := strconv.Atoi(strings.TrimSuffix(cPart, "c"))
	s, err2 := strconv.Atoi(strings.TrimSuffix(sPart, "s"))
	n, err3 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil || err3 != nil || c < 0 || s < 0 || n < 0 || c+s > n {
		return 0, 0, 0, fmt.Errorf("matched %q: want non-negative counts with C+S <= N: %w", v, ErrDecisionHeader)
	}
	return c, s, n, nil
}
