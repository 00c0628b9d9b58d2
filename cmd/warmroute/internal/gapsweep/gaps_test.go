package gapsweep

import (
	"errors"
	"slices"
	"testing"
	"time"
)

const ms = time.Millisecond

func TestPlanGaps(t *testing.T) {
	tests := []struct {
		name   string
		timing Timing
		want   []Gap
		err    error
	}{
		{"measured", Timing{P50: 180 * ms, P95: 620 * ms, TTL: 2 * time.Second, Samples: 50},
			[]Gap{{LabelBelowP50, 90 * ms}, {LabelNearP95, 620 * ms}, {LabelNearTTL, 1800 * ms}, {LabelBeyondTTL, 2400 * ms}}, nil},
		{"no samples", Timing{TTL: 2 * time.Second},
			[]Gap{{LabelBelowP50, 100 * ms}, {LabelNearTTL, 1800 * ms}, {LabelBeyondTTL, 2400 * ms}}, nil},
		{"short ttl keeps a 100ms margin", Timing{TTL: 200 * ms},
			[]Gap{{LabelBelowP50, 10 * ms}, {LabelNearTTL, 180 * ms}, {LabelBeyondTTL, 300 * ms}}, nil},
		{"p95 above ttl sorts after it", Timing{P50: 100 * ms, P95: 3 * time.Second, TTL: 2 * time.Second},
			[]Gap{{LabelBelowP50, 50 * ms}, {LabelNearTTL, 1800 * ms}, {LabelBeyondTTL, 2400 * ms}, {LabelNearP95, 3 * time.Second}}, nil},
		{"equal gaps merge", Timing{P50: 100 * ms, P95: 1800 * ms, TTL: 2 * time.Second},
			[]Gap{{LabelBelowP50, 50 * ms}, {LabelNearP95, 1800 * ms}, {LabelBeyondTTL, 2400 * ms}}, nil},
		{"no ttl", Timing{P50: 100 * ms}, nil, ErrNoGaps},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PlanGaps(tt.timing)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

var parseGapsTests = []struct {
	name string
	in   string
	want []Gap
	err  bool
}{
	{"list", "10ms, 300ms,2.2s", []Gap{{LabelGiven, 10 * ms}, {LabelGiven, 300 * ms}, {LabelGiven, 2200 * ms}}, false},
	{"below the minimum", "0s", nil, true},
	{"one", "1s", []Gap{{LabelGiven, time.Second}}, false},
	{"negative", "-1s", nil, true},
	{"not a duration", "soon", nil, true},
	{"empty element", "1s,,2s", nil, true},
	{"empty", "", nil, true},
}

func TestParseGaps(t *testing.T) {
	for _, tt := range parseGapsTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseGaps(tt.in)
			if (err != nil) != tt.err {
				t.Fatalf("error %v, want error %v", err, tt.err)
			}
			if err != nil && !errors.Is(err, ErrOptions) {
				t.Errorf("error %v is not ErrOptions", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzParseGaps(f *testing.F) {
	for _, tt := range parseGapsTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		gaps, err := ParseGaps(s)
		for _, g := range gaps {
			if g.D < 0 {
				t.Fatalf("negative gap %v from %q", g.D, s)
			}
		}
		if err == nil && len(gaps) == 0 {
			t.Fatalf("no gaps and no error from %q", s)
		}
	})
}
