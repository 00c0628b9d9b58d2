package harness

import (
	"strings"
	"testing"
)

const exposition = `# HELP warmroute_scorer_inflight_requests In-flight requests.
# TYPE warmroute_scorer_inflight_requests gauge
warmroute_scorer_inflight_requests{endpoint="127.0.0.1:1"} 2
warmroute_scorer_inflight_requests{endpoint="127.0.0.1:2"} 1
# TYPE warmroute_extproc_requests_total counter
warmroute_extproc_requests_total{outcome="routed"} 7
warmroute_extproc_requests_total{outcome="bad_request"} 3
`

func TestMetricsSum(t *testing.T) {
	m, err := ParseMetrics(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		metric string
		match  map[string]string
		want   float64
	}{
		{"gauge, all endpoints", "warmroute_scorer_inflight_requests", nil, 3},
		{"gauge, one endpoint", "warmroute_scorer_inflight_requests", map[string]string{"endpoint": "127.0.0.1:2"}, 1},
		{"counter by label", "warmroute_extproc_requests_total", map[string]string{"outcome": "routed"}, 7},
		{"label value absent", "warmroute_extproc_requests_total", map[string]string{"outcome": "internal"}, 0},
		{"family absent", "warmroute_nothing_total", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.Sum(tt.metric, tt.match); got != tt.want {
				t.Fatalf("Sum(%s, %v) = %v, want %v", tt.metric, tt.match, got, tt.want)
			}
		})
	}
}

func TestParseMetricsRejectsGarbage(t *testing.T) {
	if _, err := ParseMetrics(strings.NewReader("metric{unterminated 1\n")); err == nil {
		t.Fatal("ParseMetrics accepted a broken exposition")
	}
}

// FuzzParseMetrics checks that a malformed scrape is an error, never a panic.
func FuzzParseMetrics(f *testing.F) {
	f.Add(exposition)
	f.Add("metric{unterminated 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		m, err := ParseMetrics(strings.NewReader(in))
		if err == nil {
			_ = m.Sum("warmroute_scorer_inflight_requests", nil)
		}
	})
}
