package gapsweep

import (
	"errors"
	"testing"
)

var decisionTests = []struct {
	name   string
	header string
	want   Decision
	err    bool
}{
	{"speculative", "basis=speculative; matched=4c+6s/10; endpoint=10.0.0.2:8000; score=0.81; because=longest prefix",
		Decision{Basis: BasisSpeculative, Confirmed: 4, Speculative: 6, Blocks: 10, Endpoint: "10.0.0.2:8000", Because: "longest prefix"}, false},
	{"confirmed", "basis=confirmed; matched=12c+0s/14; endpoint=a:1",
		Decision{Basis: BasisConfirmed, Confirmed: 12, Blocks: 14, Endpoint: "a:1"}, false},
	{"none", "basis=none; matched=0c+0s/3; endpoint=a:1; because=least loaded",
		Decision{Basis: BasisNone, Blocks: 3, Endpoint: "a:1", Because: "least loaded"}, false},
	{"load with note", "basis=load; no tokenizer for pool; endpoint=b:2; score=0.50",
		Decision{Basis: BasisLoad, Endpoint: "b:2"}, false},
	{"unknown keys kept out", "basis=none; future=1; endpoint=c:3", Decision{Basis: BasisNone, Endpoint: "c:3"}, false},
	{"empty", "", Decision{Basis: BasisUnknown}, false},
	{"no basis", "endpoint=a:1", Decision{Basis: BasisUnknown}, true},
	{"bad basis", "basis=maybe", Decision{Basis: BasisUnknown}, true},
	{"bad matched", "basis=none; matched=4x+1s/2", Decision{Basis: BasisUnknown}, true},
	{"matched over total", "basis=confirmed; matched=4c+1s/2", Decision{Basis: BasisUnknown}, true},
	{"negative matched", "basis=confirmed; matched=-1c+1s/2", Decision{Basis: BasisUnknown}, true},
}

func TestParseDecision(t *testing.T) {
	for _, tt := range decisionTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDecision(tt.header)
			if (err != nil) != tt.err {
				t.Fatalf("error %v, want error %v", err, tt.err)
			}
			if err != nil && !errors.Is(err, ErrDecisionHeader) {
				t.Errorf("error %v is not ErrDecisionHeader", err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestBasisMetricLabel(t *testing.T) {
	for b, want := range map[Basis]string{BasisLoad: "none", BasisNone: "none", BasisConfirmed: "confirmed", BasisSpeculative: "speculative"} {
		t.Run(string(b), func(t *testing.T) {
			if got := b.MetricLabel(); got != want {
				t.Errorf("%s.MetricLabel() = %q, want %q", b, got, want)
			}
		})
	}
}

func FuzzParseDecision(f *testing.F) {
	for _, tt := range decisionTests {
		f.Add(tt.header)
	}
	f.Fuzz(func(t *testing.T, h string) {
		d, err := ParseDecision(h)
		if err != nil && d.Basis != BasisUnknown {
			t.Fatalf("error %v with basis %q", err, d.Basis)
		}
		if d.Confirmed < 0 || d.Speculative < 0 || d.Confirmed+d.Speculative > d.Blocks {
			t.Fatalf("inconsistent counts %+v", d)
		}
	})
}

func BenchmarkParseDecision(b *testing.B) {
	h := decisionTests[0].header
	for b.Loop() {
		if _, err := ParseDecision(h); err != nil {
			b.Fatal(err)
		}
	}
}
