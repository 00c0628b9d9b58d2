package scorer

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/warmroute/warmroute/index"
)

const tol = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) < tol }

func checkScores(t *testing.T, got, want []float64) {
	t.Helper()
	for i := range want {
		if !near(got[i], want[i]) {
			t.Fatalf("scores = %v, want %v", got, want)
		}
	}
}

func eps(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "10.0.0." + string(rune('1'+i)) + ":8000"
	}
	return out
}

func TestPrefixScore(t *testing.T) {
	tests := []struct {
		name    string
		blocks  int
		matches []index.Match
		trust   []float64
		want    []float64
	}{
		{name: "no blocks", blocks: 0, matches: []index.Match{{}, {}}, trust: []float64{0, 0}, want: []float64{0, 0}},
		{name: "confirmed on gpu", blocks: 4, matches: []index.Match{{Confirmed: 4, Weighted: 4}, {Confirmed: 2, Weighted: 2}}, trust: []float64{0, 0}, want: []float64{1, 0.5}},
		{name: "medium weights", blocks: 4, matches: []index.Match{{Confirmed: 4, Weighted: 2}, {}}, trust: []float64{0, 0}, want: []float64{0.5, 0}},
		{name: "speculative fully trusted", blocks: 4, matches: []index.Match{{Speculative: 4}, {Confirmed: 1, Weighted: 1, Speculative: 1}}, trust: []float64{1, 1}, want: []float64{1, 0.5}},
		{name: "speculative partly trusted", blocks: 4, matches: []index.Match{{Speculative: 4}, {Confirmed: 2, Weighted: 2, Speculative: 2}}, trust: []float64{0.5, 0.25}, want: []float64{0.5, 0.625}},
		{name: "speculative paused", blocks: 4, matches: []index.Match{{Speculative: 4}, {}}, trust: []float64{0, 0}, want: []float64{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &field{endpoints: eps(len(tt.matches)), matches: tt.matches, trust: tt.trust, blocks: tt.blocks}
			got := make([]float64, len(tt.matches))
			prefixScore{}.Score(f, got)
			checkScores(t, got, tt.want)
		})
	}
}

func TestLoadScore(t *testing.T) {
	tests := []struct {
		name  string
		loads []loadSample
		want  []float64
	}{
		{name: "single", loads: []loadSample{{3, 100}}, want: []float64{1}},
		{name: "all equal", loads: []loadSample{{2, 10}, {2, 10}}, want: []float64{1, 1}},
		{name: "in-flight only", loads: []loadSample{{0, 0}, {2, 0}, {4, 0}}, want: []float64{1, 0.75, 0.5}},
		{name: "prefill only", loads: []loadSample{{1, 0}, {1, 1000}}, want: []float64{1, 0.5}},
		{name: "both", loads: []loadSample{{0, 1000}, {4, 0}}, want: []float64{0.5, 0.5}},
		{name: "most loaded both", loads: []loadSample{{0, 0}, {4, 1000}}, want: []float64{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &field{endpoints: eps(len(tt.loads)), loads: tt.loads}
			got := make([]float64, len(tt.loads))
			loadScore{}.Score(f, got)
			checkScores(t, got, tt.want)
		})
	}
}

// gauges is an in-memory EngineLoad.
type gauges map[string][3]float64

func (g gauges) EngineLoad(ep string) (running, waiting, kv float64, ok bool) {
	v, ok := g[ep]
	return v[0], v[1], v[2], ok
}

func TestEngineScore(t *testing.T) {
	e := eps(3)
	tests := []struct {
		name string
		g    gauges
		want []float64
	}{
		{name: "none reported", g: gauges{}, want: []float64{0.5, 0.5, 0.5}},
		{name: "equal queues, kv differs", g: gauges{e[0]: {1, 0, 0}, e[1]: {1, 0, 0.5}, e[2]: {1, 0, 1}}, want: []float64{1, 0.75, 0.5}},
		{name: "queues differ", g: gauges{e[0]: {0, 0, 0}, e[1]: {2, 2, 0}, e[2]: {4, 4, 0}}, want: []float64{1, 0.75, 0.5}},
		{name: "one missing gets the reporters' median", g: gauges{e[0]: {0, 0, 0}, e[2]: {4, 4, 1}}, want: []float64{1, 0.5, 0}},
		{name: "an idle lone reporter does not outscore the silent", g: gauges{e[0]: {0, 0, 0}}, want: []float64{1, 1, 1}},
		{name: "two report, the silent one gets their median", g: gauges{e[0]: {0, 0, 0}, e[1]: {2, 2, 0.5}}, want: []float64{1, 0.25, 0.625}},
		{name: "out of range kv clamped", g: gauges{e[0]: {0, 0, -3}, e[1]: {0, 0, 7}, e[2]: {0, 0, math.NaN()}}, want: []float64{1, 0.5, 0.75}},
		{name: "nan queue is unknown", g: gauges{e[0]: {math.NaN(), 0, 0}, e[1]: {0, 0, 0}, e[2]: {0, 0, 0}}, want: []float64{1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &field{endpoints: e}
			got := make([]float64, len(e))
			engineScore{tt.g}.Score(f, got)
			checkScores(t, got, tt.want)
		})
	}
}

func TestClamp01(t *testing.T) {
	for _, tt := range []struct {
		name    string
		in, out float64
	}{
		{"inside", 0.3, 0.3}, {"below", -1, 0}, {"above", 2, 1}, {"nan", math.NaN(), 0}, {"inf", math.Inf(1), 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := clamp01(tt.in); !near(got, tt.out) {
				t.Fatalf("clamp01(%v) = %v, want %v", tt.in, got, tt.out)
			}
		})
	}
}

// TestColdTrafficSpreadsBesideAnIdleReporter: one endpoint's relay reports
// idle engine gauges, the others report none. Cold requests (no prefix, no
// router load) must still spread over all three, not all land on the
// reporter as they did when silent endpoints scored a fixed 0.5.
func TestColdTrafficSpreadsBesideAnIdleReporter(t *testing.T) {
	eps := pipePools[0].Endpoints
	s := New(NewPools(pipePools, ""), &Load{}, Options{EngineLoad: gauges{eps[0]: {0, 0, 0}}})
	seen := map[string]int{}
	for range 60 {
		d, err := s.Pick(context.Background(), &Request{Kind: KindCompletion, Model: "m", Prompts: []string{"hi"}})
		if err != nil {
			t.Fatal(err)
		}
		seen[d.Endpoint]++
		d.Commit()
		d.Release()
	}
	if len(seen) != len(eps) || seen[eps[0]] > 40 {
		t.Fatalf("60 cold requests went %v, want them spread over all %d endpoints", seen, len(eps))
	}
}

// TestShedWhenEverySaturated: with scoring.shedWaiting set, a request is
// refused with ErrSaturated only when every candidate reports at least that
// many waiting requests; one candidate below it, or without fresh gauges,
// takes the request; off (zero) never sheds.
func TestShedWhenEverySaturated(t *testing.T) {
	a, b, c := pipePools[0].Endpoints[0], pipePools[0].Endpoints[1], pipePools[0].Endpoints[2]
	tests := []struct {
		name  string
		shed  float64
		g     gauges
		want  error
		route string // the one endpoint that may take it, when not shed
	}{
		{name: "all saturated", shed: 4, g: gauges{a: {8, 4, 0.9}, b: {8, 9, 1}, c: {8, 5, 1}}, want: ErrSaturated},
		{name: "one below", shed: 4, g: gauges{a: {8, 4, 0.9}, b: {8, 3, 1}, c: {8, 5, 1}}, route: b},
		{name: "one without gauges", shed: 4, g: gauges{a: {8, 4, 0.9}, b: {8, 9, 1}}},
		{name: "NaN waiting is not saturated", shed: 4, g: gauges{a: {8, 4, 0.9}, b: {8, math.NaN(), 1}, c: {8, 5, 1}}},
		{name: "off", shed: 0, g: gauges{a: {8, 40, 1}, b: {8, 40, 1}, c: {8, 40, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(NewPools(pipePools, ""), &Load{}, Options{EngineLoad: tt.g,
				Scoring: ScoringConfig{ShedWaiting: tt.shed, EngineLoadWeight: Float(100)}})
			d, err := s.Pick(context.Background(), &Request{Model: "m"})
			if !errors.Is(err, tt.want) {
				t.Fatalf("Pick = %v, %v; want %v", d, err, tt.want)
			}
			if tt.route != "" && d.Endpoint != tt.route {
				t.Errorf("routed to %s (%s), want the unsaturated %s", d.Endpoint, d.Reason, tt.route)
			}
		})
	}
}
