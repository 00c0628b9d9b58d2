package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
)

// stats summarizes one measured run.
type stats struct {
	n        int
	p50, p99 time.Duration
	rps      float64
}

func summarize(lat []time.Duration, elapsed time.Duration) stats {
	if len(lat) == 0 {
		return stats{}
	}
	slices.Sort(lat)
	return stats{n: len(lat), p50: percentile(lat, 0.50), p99: percentile(lat, 0.99),
		rps: float64(len(lat)) / elapsed.Seconds()}
}

// percentile returns the nearest-rank percentile p (0 < p <= 1) of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// row is one concurrency level: the same load through both paths.
type row struct {
	concurrency    int
	direct, routed stats
}

func printReport(w io.Writer, c config, rows []row, cpus int) {
	fmt.Fprintf(w, "\nLatency added by warmroute (Envoy %s, ext_proc %s, %d-byte /v1/completions bodies, "+
		"zero-latency simulator, %d measured requests per cell after %d warm-up, %d Envoy workers, %d CPUs shared by "+
		"load generator, Envoy, router and simulator, loopback):\n\n",
		harness.EnvoyVersion, c.modeName, c.bodyBytes, c.requests, c.warmup, c.envoyCPU, cpus)
	fmt.Fprintln(w, "| concurrency | Envoy only p50 | Envoy only p99 | Envoy + warmroute p50 | Envoy + warmroute p99 | added p50 | added p99 | ratio p50 | ratio p99 | requests/s (only / +warmroute) |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %.0f / %.0f |\n", r.concurrency,
			ms(r.direct.p50), ms(r.direct.p99), ms(r.routed.p50), ms(r.routed.p99),
			ms(r.routed.p50-r.direct.p50), ms(r.routed.p99-r.direct.p99),
			ratio(r.routed.p50, r.direct.p50), ratio(r.routed.p99, r.direct.p99),
			r.direct.rps, r.routed.rps)
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func ratio(a, b time.Duration) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", float64(a)/float64(b))
}
