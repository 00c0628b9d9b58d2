package gapsweep

// Verdict names what one pair showed.
type Verdict string

// Verdicts. The success case should show prediction hits below the
// confirmation latency and confirmation hits beyond it; failure cases should
// show the failed prediction trusted until the TTL (false warm routes) and
// dropped after it, and never a confirmation.
const (
	VerdictPredictedHit     Verdict = "routed on prediction and hit"
	VerdictPredictedUnknown Verdict = "routed on prediction, hit unknown"
	VerdictAheadOfPrefill   Verdict = "routed on prediction ahead of prefill"
	VerdictConfirmedHit     Verdict = "routed on confirmation and hit"
	VerdictConfirmedUnknown Verdict = "routed on confirmation, hit unknown"
	VerdictFalseWarm        Verdict = "false warm route"
	VerdictFailedTrusted    Verdict = "routed on failed prediction, hit unknown"
	VerdictFailureConfirmed Verdict = "failed request looks confirmed"
	VerdictExpired          Verdict = "prediction expired"
	VerdictUnindexedHit     Verdict = "hit without indexed match"
	VerdictDropped          Verdict = "failed prediction not trusted"
	VerdictLoadOnly         Verdict = "prefix routing off"
	VerdictNoDecision       Verdict = "no decision header"
	VerdictError            Verdict = "second request failed"
)

// Bad reports whether the verdict is a routing mistake: work the index
// promised and the engine did not deliver, or a failure that looked
// confirmed.
func (v Verdict) Bad() bool { return v == VerdictFalseWarm || v == VerdictFailureConfirmed }

// hit reports the second request's cache outcome: known, and whether any
// prompt token was cached.
func hit(u Usage) (known, warm bool) {
	if !u.Known || u.Cached == nil {
		return false, false
	}
	return true, *u.Cached > 0
}

// Judge classifies a pair from the fault the first request carried and what
// both requests saw.
func Judge(fault Fault, first, second *Exchange) Verdict {
	switch {
	case second.Err != "" && second.Decision.Basis == BasisUnknown || second.Status/100 != 2:
		return VerdictError
	case second.Decision.Basis == BasisUnknown:
		return VerdictNoDecision
	case second.Decision.Basis == BasisLoad:
		return VerdictLoadOnly
	case fault != FaultNone && second.Decision.Basis == BasisConfirmed:
		return VerdictFailureConfirmed
	case second.Decision.Basis == BasisSpeculative:
		return judgePrediction(fault, first, second)
	case second.Decision.Basis == BasisConfirmed:
		if known, warm := hit(second.Usage); !known {
			return VerdictConfirmedUnknown
		} else if warm {
			return VerdictConfirmedHit
		}
		return VerdictFalseWarm
	}
	return judgeUnindexed(fault, second)
}

func judgePrediction(fault Fault, first, second *Exchange) Verdict {
	known, warm := hit(second.Usage)
	switch {
	case warm:
		return VerdictPredictedHit
	case !known && fault != FaultNone:
		return VerdictFailedTrusted
	case !known:
		return VerdictPredictedUnknown
	case fault == FaultNone && aheadOfPrefill(first, second):
		return VerdictAheadOfPrefill
	}
	return VerdictFalseWarm
}

// aheadOfPrefill reports whether the second request was sent before the
// first produced its first token: the first's blocks could not be cached
// yet, so a cold second request says nothing about the prediction.
func aheadOfPrefill(first, second *Exchange) bool {
	return !first.firstAt.IsZero() && second.sent.Before(first.firstAt)
}

func judgeUnindexed(fault Fault, second *Exchange) Verdict {
	if _, warm := hit(second.Usage); warm {
		return VerdictUnindexedHit
	}
	if fault != FaultNone {
		return VerdictDropped
	}
	return VerdictExpired
}
