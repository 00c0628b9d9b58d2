package ttl

import (
	"errors"
	"testing"
	"time"

	"github.com/warmroute/warmroute/index"
)

func TestAdviseReferenceExample(t *testing.T) {
	tests := []struct {
		name   string
		pct    Percentile
		want   time.Duration
		capped bool
	}{
		// The worked example: p99 1.15 s + 0.25 s backlog + 0.10 s jitter = 1.50 s.
		{"p99", 0.99, 1500 * time.Millisecond, false},
		{"p95", 0.95, 970 * time.Millisecond, false},
		{"p50", 0.5, 530 * time.Millisecond, false},
		// The maximum is the 3 s straggler: 3.35 s, cut to the 3 s cap.
		{"max", 1, 3 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := advisor{pct: tt.pct, jitter: 100 * time.Millisecond, maxStale: 3 * time.Second,
				resolution: 10 * time.Millisecond, minSamples: 100}
			adv := a.advise(referenceLatencies(), 250*time.Millisecond)
			if !adv.Ready || adv.TTL.D() != tt.want || adv.Capped != tt.capped {
				t.Fatalf("advice %+v, want ready TTL %v capped %v", adv, tt.want, tt.capped)
			}
			if adv.P50.D() != 180*time.Millisecond || adv.P95.D() != 620*time.Millisecond ||
				adv.P99.D() != 1150*time.Millisecond || adv.Max.D() != 3*time.Second {
				t.Fatalf("distribution %+v does not match referenceLatencies", adv)
			}
		})
	}
}

// TestAdviseReferenceThroughController runs referenceLatencies through Begin,
// Observe, the backlog gauge and a Run step, and reads the exported advice.
func TestAdviseReferenceThroughController(t *testing.T) {
	h := newHarness(t, Config{MaxStale: dur(3 * time.Second)}, func(o *Options) {
		o.Backlog = backlog(250 * time.Millisecond)
	})
	h.feed(0, "10.0.0.1:8000", "llama", referenceLatencies())
	h.step(h.clk.Now())
	rep := h.Report()
	if got := rep.Overall.Advice.TTL.D(); got != 1500*time.Millisecond {
		t.Fatalf("overall advice %v, want 1.5s (%+v)", got, rep.Overall.Advice)
	}
	labels := map[string]string{"endpoint": "10.0.0.1:8000", "model": "llama"}
	if got := h.value(t, "warmroute_ttl_advised_seconds", labels); !near(got, 1.5) {
		t.Fatalf("advised gauge %v, want 1.5", got)
	}
	if got := h.value(t, "warmroute_ttl_latency_quantile_seconds", labels); !near(got, 1.15) {
		t.Fatalf("quantile gauge %v, want 1.15", got)
	}
	// Static mode: advice is exported, the TTL stays 2 s.
	if got := h.TTL("10.0.0.1:8000", "llama"); got != DefaultStatic {
		t.Fatalf("static TTL %v, want %v", got, DefaultStatic)
	}
}

func TestAdviseRoundsAfterArithmetic(t *testing.T) {
	tests := []struct {
		name                string
		lq, backlog, res    time.Duration
		want                time.Duration
		roundedFirstWouldBe time.Duration
	}{
		// 1.141 + 0.251 + 0.1 = 1.492 -> 1.5; rounding each term first
		// would give 1.2 + 0.3 + 0.1 = 1.6.
		{"100ms", 1141 * time.Millisecond, 251 * time.Millisecond, 100 * time.Millisecond, 1500 * time.Millisecond, 1600 * time.Millisecond},
		{"exact multiple stays", 1150 * time.Millisecond, 250 * time.Millisecond, 10 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"1s rounds up", 1141 * time.Millisecond, 0, time.Second, 2 * time.Second, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := advisor{pct: 1, jitter: 100 * time.Millisecond, maxStale: 5 * time.Second, resolution: tt.res, minSamples: 1}
			adv := a.advise([]time.Duration{tt.lq}, tt.backlog)
			if adv.TTL.D() != tt.want {
				t.Fatalf("TTL %v, want %v", adv.TTL.D(), tt.want)
			}
			perTerm := roundUp(tt.lq, tt.res) + roundUp(tt.backlog, tt.res) + roundUp(100*time.Millisecond, tt.res)
			if perTerm != tt.roundedFirstWouldBe {
				t.Fatalf("rounding first gives %v, test expects %v", perTerm, tt.roundedFirstWouldBe)
			}
		})
	}
}

func TestAdviseCap(t *testing.T) {
	a := advisor{pct: 0.99, jitter: 100 * time.Millisecond, maxStale: 1200 * time.Millisecond, resolution: 10 * time.Millisecond, minSamples: 1}
	adv := a.advise(referenceLatencies(), 250*time.Millisecond)
	if adv.TTL.D() != 1200*time.Millisecond || !adv.Capped || adv.Raw.D() != 1500*time.Millisecond {
		t.Fatalf("advice %+v, want raw 1.5s capped to 1.2s", adv)
	}
}

func TestAdviseMinSamples(t *testing.T) {
	tests := []struct {
		name    string
		samples int
		ready   bool
	}{
		{"none", 0, false},
		{"one short", 99, false},
		{"enough", 100, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, Config{})
			lat := make([]time.Duration, tt.samples)
			for i := range lat {
				lat[i] = 500 * time.Millisecond
			}
			h.feed(0, "e", "m", lat)
			adv := h.Report().Overall.Advice
			if adv.Ready != tt.ready || adv.Samples != tt.samples || (adv.TTL != 0) != tt.ready {
				t.Fatalf("advice %+v, want ready=%v with %d samples", adv, tt.ready, tt.samples)
			}
		})
	}
}

// TestAdviseUsesLastBlock checks that a decision's advisor sample is the
// confirmation of its last block, late ones included, so chunked prefill and
// a too-short TTL do not censor the distribution.
func TestAdviseUsesLastBlock(t *testing.T) {
	h := newHarness(t, Config{MinSamples: 1})
	h.Begin(7, Route{Endpoint: "e", Model: "m", PromptTokens: 5000, NewSpeculative: 3, BlockSize: 16, At: t0})
	h.Observe(index.Outcome{Kind: index.Confirmed, Endpoint: "e", Decision: 7, Blocks: 2, Latency: 300 * time.Millisecond})
	if adv := h.Report().Overall.Advice; adv.Samples != 0 {
		t.Fatalf("a half-confirmed decision gave %d samples", adv.Samples)
	}
	h.Observe(index.Outcome{Kind: index.EarlyExpiry, Endpoint: "e", Decision: 7, Blocks: 1, Latency: 2400 * time.Millisecond})
	if adv := h.Report().Overall.Advice; adv.Samples != 1 || adv.Quantile.D() != 2400*time.Millisecond {
		t.Fatalf("advice %+v, want one 2.4s sample", adv)
	}
}

func TestQuantile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name    string
		samples []time.Duration
		p       Percentile
		want    time.Duration
	}{
		{"empty", nil, 0.99, 0},
		{"single", ms(7), 0.5, 7 * time.Millisecond},
		{"median of four is the second", ms(4, 1, 3, 2), 0.5, 2 * time.Millisecond},
		{"p99 of 100 is the 99th", append(ms(make([]int, 98)...), ms(5, 9)...), 0.99, 5 * time.Millisecond},
		{"max", ms(3, 9, 1), 1, 9 * time.Millisecond},
		{"tiny p is the minimum", ms(3, 9, 1), 0.0001, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quantile(tt.samples, tt.p); got != tt.want {
				t.Fatalf("quantile = %v, want %v", got, tt.want)
			}
		})
	}
}

var percentileTests = []struct {
	in   string
	want Percentile
	ok   bool
}{
	{"p99", 0.99, true},
	{"P95", 0.95, true},
	{" max ", 1, true},
	{"p100", 1, true},
	{"p99.9", 0.999, true},
	{"99", 0, false},
	{"p0", 0, false},
	{"p101", 0, false},
	{"p-5", 0, false},
	{"pNaN", 0, false},
	{"pinf", 0, false},
	{"p1e1", 0, false},
	{"", 0, false},
	{"p", 0, false},
}

func TestParsePercentile(t *testing.T) {
	for _, tt := range percentileTests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePercentile(tt.in)
			if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrPercentile)) {
				t.Fatalf("ParsePercentile(%q) error %v, want ok=%v", tt.in, err, tt.ok)
			}
			if tt.ok && !near(float64(got), float64(tt.want)) {
				t.Fatalf("ParsePercentile(%q) = %v, want %v", tt.in, got, tt.want)
			}
			if tt.ok {
				if back, err := ParsePercentile(got.String()); err != nil || !near(float64(back), float64(got)) {
					t.Fatalf("round trip of %v: %v, %v", got, back, err)
				}
			}
		})
	}
}

func FuzzParsePercentile(f *testing.F) {
	for _, tt := range percentileTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePercentile(s)
		if err != nil {
			if !errors.Is(err, ErrPercentile) {
				t.Fatalf("error %v does not wrap ErrPercentile", err)
			}
			return
		}
		if !(p > 0 && p <= 1) {
			t.Fatalf("ParsePercentile(%q) = %v outside (0, 1]", s, p)
		}
		if q := quantile([]time.Duration{1, 2, 3}, p); q < 1 || q > 3 {
			t.Fatalf("quantile at %v = %v", p, q)
		}
	})
}

func TestExposureSeedExample(t *testing.T) {
	// 120 routed requests/s, 0.4% failed predictions, T = 1.5 s: 0.72.
	tl := tally{begun: 3000, closed: 3000, failed: 12, staleTokens: 12 * 64}
	e := exposureOf(&tl, 25*time.Second, 1500*time.Millisecond)
	if !near(e.Requests, 0.72) || !near(e.Rate, 120) || !near(e.FailureProbability, 0.004) {
		t.Fatalf("exposure %+v, want 0.72 requests", e)
	}
	if !near(e.Tokens, 120*(12.0*64/3000)*1.5) {
		t.Fatalf("token exposure %v", e.Tokens)
	}
	if five := e.at(5 * time.Second); !near(five.Requests, 2.4) {
		t.Fatalf("at 5s: %v, want 2.4 (120 req/s x 0.004 x 5 s)", five.Requests)
	}
}

// TestExposureThroughController drives 3000 decisions over 25 s, 12 of them
// failing with a 4-block (64-token) stale prediction, at a 1.5 s static TTL.
func TestExposureThroughController(t *testing.T) {
	h := newHarness(t, Config{Static: dur(1500 * time.Millisecond)}, func(o *Options) { o.Limits.Window = 25 * time.Second })
	gap := 25 * time.Second / 3000
	for i := range 3000 {
		id := index.DecisionID(i)
		h.Begin(id, Route{Endpoint: "e", Model: "m", PromptTokens: 64, NewSpeculative: 4, BlockSize: 16, At: h.clk.Now()})
		kind := index.Confirmed
		if i%250 == 0 {
			kind = index.StaleExpiry
		}
		h.Observe(index.Outcome{Kind: kind, Endpoint: "e", Decision: id, Blocks: 4, Latency: time.Millisecond})
		h.clk.Advance(gap)
	}
	h.clk.Advance(-time.Nanosecond) // the window's last instant, before the first bucket leaves
	h.step(h.clk.Now())
	labels := map[string]string{"endpoint": "e", "model": "m"}
	if got := h.value(t, "warmroute_ttl_exposure_requests", labels); !near(got, 0.72) {
		t.Fatalf("exposure gauge %v, want 0.72", got)
	}
	if got := h.value(t, "warmroute_ttl_exposure_tokens", labels); !near(got/(0.72*64), 1) {
		t.Fatalf("token exposure gauge %v, want %v", got, 0.72*64)
	}
}
