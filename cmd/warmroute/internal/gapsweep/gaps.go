package gapsweep

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/warmroute/warmroute/api"
)

// Gap is one tested interval between the two requests of a pair, with why
// it was chosen.
type Gap struct {
	Label string        `json:"label"`
	D     time.Duration `json:"-"`
}

// Labels of the gaps PlanGaps chooses.
const (
	LabelBelowP50  = "below p50"
	LabelNearP95   = "near p95"
	LabelNearTTL   = "near TTL"
	LabelBeyondTTL = "beyond TTL"
	LabelGiven     = "given"
)

// Timing is what the router measured and uses: route-to-confirmation
// latency percentiles (zero when it has no samples yet) and the TTL in force.
type Timing struct {
	P50     time.Duration `json:"-"`
	P95     time.Duration `json:"-"`
	TTL     time.Duration `json:"-"`
	Grace   time.Duration `json:"-"`
	Samples int           `json:"samples"`
}

// timingJSON is Timing as the report prints it.
type timingJSON struct {
	P50     api.Duration `json:"p50"`
	P95     api.Duration `json:"p95"`
	TTL     api.Duration `json:"ttl"`
	Grace   api.Duration `json:"grace"`
	Samples int          `json:"samples"`
}

func (t Timing) json() timingJSON {
	return timingJSON{api.Duration(t.P50), api.Duration(t.P95), api.Duration(t.TTL), api.Duration(t.Grace), t.Samples}
}

// beyondMargin is how far past the TTL the last gap goes: enough that timer
// resolution and the router's expiry sweep cannot blur "expired", small
// enough to stay inside the grace window where late confirmations count.
func beyondMargin(ttl time.Duration) time.Duration {
	return max(ttl/5, 100*time.Millisecond)
}

// MinGap is the shortest gap a sweep uses. Gaps are timed from the first
// request's sending; below a few milliseconds the second request can reach
// the router first, and its "prediction" would be its own pair's, not the
// one under test.
const MinGap = 10 * time.Millisecond

// PlanGaps chooses the paired-gap experiment's four gaps from t: half the p50, the
// p95, 90% of the TTL and the TTL plus a margin. Without latency samples
// the p50 gap becomes a twentieth of the TTL and the p95 gap is left out,
// since there is nothing to place it by. No gap is below MinGap. Equal gaps
// are merged.
func PlanGaps(t Timing) ([]Gap, error) {
	if t.TTL <= 0 {
		return nil, fmt.Errorf("planning gaps: the router reports no TTL: %w", ErrNoGaps)
	}
	below := t.TTL / 20
	if t.P50 > 0 {
		below = t.P50 / 2
	}
	gaps := []Gap{{LabelBelowP50, max(below, MinGap)}}
	if t.P95 > 0 {
		gaps = append(gaps, Gap{LabelNearP95, t.P95})
	}
	gaps = append(gaps, Gap{LabelNearTTL, t.TTL - t.TTL/10}, Gap{LabelBeyondTTL, t.TTL + beyondMargin(t.TTL)})
	slices.SortStableFunc(gaps, func(a, b Gap) int { return cmp.Compare(a.D, b.D) })
	return slices.CompactFunc(gaps, func(a, b Gap) bool { return a.D == b.D }), nil
}

// ParseGaps reads a comma-separated list of Go durations ("10ms,300ms,2.2s"),
// each at least MinGap.
func ParseGaps(s string) ([]Gap, error) {
	var gaps []Gap
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		d, err := time.ParseDuration(part)
		if err != nil {
			return nil, fmt.Errorf("parsing gap %q: %w", part, ErrOptions)
		}
		if d < MinGap {
			return nil, fmt.Errorf("parsing gap %q: below %s the pair's two requests race to the router: %w", part, MinGap, ErrOptions)
		}
		gaps = append(gaps, Gap{LabelGiven, d})
	}
	return gaps, nil
}
