package gapsweep

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenResult is a fixed two-gap sweep with one of each kind of row.
func goldenResult() *Result {
	gaps := []Gap{{LabelBelowP50, 90 * ms}, {LabelBeyondTTL, 2400 * ms}}
	first := ex(BasisNone, intp(0))
	first.Decision = Decision{Basis: BasisNone, Blocks: 14, Endpoint: "10.0.0.1:8000"}
	pred := ex(BasisSpeculative, intp(208))
	pred.Decision = Decision{Basis: BasisSpeculative, Speculative: 13, Blocks: 14, Endpoint: "10.0.0.1:8000"}
	pred.TTFT = api.Duration(7 * ms)
	cold := ex(BasisNone, intp(0))
	cold.Decision = Decision{Basis: BasisNone, Blocks: 14, Endpoint: "10.0.0.2:8000"}
	cold.TTFT = api.Duration(41 * ms)
	unknown := ex(BasisConfirmed, nil)
	unknown.Decision = Decision{Basis: BasisConfirmed, Confirmed: 13, Blocks: 14, Endpoint: "10.0.0.1:8000"}
	failed := Exchange{Status: 500, Err: "status 500", Decision: Decision{Basis: BasisNone, Endpoint: "10.0.0.1:8000"}}
	r := &Result{Target: "http://envoy:8080", Debug: "http://127.0.0.1:9095", Model: "m", BlockSize: 16, BlockSizeFrom: "router",
		PrefixWords: 200, SuffixWords: 6, Fault: FaultNone, PairsPerGap: 2, gaps: gaps, Gaps: gapsJSON(gaps),
		Timing: &timingJSON{P50: api.Duration(180 * ms), P95: api.Duration(620 * ms), TTL: api.Duration(2 * time.Second), Samples: 40}}
	r.Pairs = []Pair{
		{Gap: LabelBelowP50, GapD: api.Duration(90 * ms), ActualGap: api.Duration(91 * ms), First: first, Second: pred, SameEndpoint: true, Uncached: intp(17), Verdict: VerdictPredictedHit},
		{Gap: LabelBelowP50, GapD: api.Duration(90 * ms), ActualGap: api.Duration(90 * ms), Index: 1, First: failed, Second: cold, Uncached: intp(225), Verdict: VerdictDropped},
		{Gap: LabelBeyondTTL, GapD: api.Duration(2400 * ms), ActualGap: api.Duration(2401 * ms), First: first, Second: unknown, SameEndpoint: true, Verdict: VerdictConfirmedUnknown},
	}
	r.Stopped = "deadline (5m0s): context deadline exceeded"
	return r.finish()
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name  string
		write func(*Result, *bytes.Buffer) error
	}{
		{"table.golden", func(r *Result, b *bytes.Buffer) error { return r.WriteTable(b) }},
		{"result.json", func(r *Result, b *bytes.Buffer) error {
			enc := json.NewEncoder(b)
			enc.SetIndent("", "  ")
			return enc.Encode(r)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(goldenResult(), &b); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tt.name)
			if *update {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("output differs from %s (go test -update to accept):\n%s", path, b.String())
			}
		})
	}
}

func TestSummaryCounts(t *testing.T) {
	r := goldenResult()
	s := r.Summary[0]
	if s.Pairs != 2 || s.Bases[BasisSpeculative] != 1 || s.Bases[BasisNone] != 1 || s.Bad != 0 {
		t.Errorf("summary %+v", s)
	}
	if s.MeanUncached == nil || *s.MeanUncached != 121 {
		t.Errorf("mean uncached %v, want 121", s.MeanUncached)
	}
	if got := r.Decisions; got["none"] != 4 || got["speculative"] != 1 || got["confirmed"] != 1 {
		t.Errorf("decisions %v", got)
	}
}
