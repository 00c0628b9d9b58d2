package gapsweep

import (
	"testing"
	"time"
)

func intp(n int) *int { return &n }

// ex builds an exchange for verdict tables.
func ex(basis Basis, cached *int) Exchange {
	return Exchange{Status: 200, Decision: Decision{Basis: basis, Endpoint: "a:1"},
		Usage: Usage{Known: cached != nil, Prompt: 100, Cached: cached}}
}

func TestJudge(t *testing.T) {
	t0 := time.Unix(100, 0)
	okFirst := ex(BasisNone, intp(0))
	okFirst.sent, okFirst.firstAt = t0, t0.Add(50*ms)
	early := ex(BasisSpeculative, intp(0))
	early.sent = t0.Add(10 * ms)
	late := ex(BasisSpeculative, intp(0))
	late.sent = t0.Add(60 * ms)
	failed := Exchange{Status: 500, Err: "status 500", Decision: Decision{Basis: BasisNone}}
	tests := []struct {
		name          string
		fault         Fault
		first, second Exchange
		want          Verdict
	}{
		{"prediction hit", FaultNone, okFirst, ex(BasisSpeculative, intp(64)), VerdictPredictedHit},
		{"prediction unknown", FaultNone, okFirst, ex(BasisSpeculative, nil), VerdictPredictedUnknown},
		{"prediction ahead of prefill", FaultNone, okFirst, early, VerdictAheadOfPrefill},
		{"prediction cold after first token", FaultNone, okFirst, late, VerdictFalseWarm},
		{"confirmed hit", FaultNone, okFirst, ex(BasisConfirmed, intp(64)), VerdictConfirmedHit},
		{"confirmed unknown", FaultNone, okFirst, ex(BasisConfirmed, nil), VerdictConfirmedUnknown},
		{"confirmed but cold", FaultNone, okFirst, ex(BasisConfirmed, intp(0)), VerdictFalseWarm},
		{"expired", FaultNone, okFirst, ex(BasisNone, intp(0)), VerdictExpired},
		{"expired unknown", FaultNone, okFirst, ex(BasisNone, nil), VerdictExpired},
		{"unindexed hit", FaultNone, okFirst, ex(BasisNone, intp(32)), VerdictUnindexedHit},
		{"failed first trusted and cold", FaultFailPrefill, failed, ex(BasisSpeculative, intp(0)), VerdictFalseWarm},
		{"failed first trusted unknown", FaultFailPrefill, failed, ex(BasisSpeculative, nil), VerdictFailedTrusted},
		{"failed first dropped", FaultFailPrefill, failed, ex(BasisNone, intp(0)), VerdictDropped},
		{"failed first looks confirmed", FaultFailPrefill, failed, ex(BasisConfirmed, intp(64)), VerdictFailureConfirmed},
		{"cancelled first looks confirmed", FaultCancel, okFirst, ex(BasisConfirmed, nil), VerdictFailureConfirmed},
		{"load only", FaultNone, okFirst, ex(BasisLoad, intp(0)), VerdictLoadOnly},
		{"no header", FaultNone, okFirst, ex(BasisUnknown, intp(0)), VerdictNoDecision},
		{"second failed", FaultNone, okFirst, failed, VerdictError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Judge(tt.fault, &tt.first, &tt.second); got != tt.want {
				t.Errorf("Judge = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestVerdictBad(t *testing.T) {
	for _, v := range []Verdict{VerdictFalseWarm, VerdictFailureConfirmed} {
		if !v.Bad() {
			t.Errorf("%q is not bad", v)
		}
	}
	for _, v := range []Verdict{VerdictPredictedHit, VerdictConfirmedHit, VerdictExpired, VerdictDropped} {
		if v.Bad() {
			t.Errorf("%q is bad", v)
		}
	}
}
