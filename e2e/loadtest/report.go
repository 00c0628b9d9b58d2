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
	// routerCPU is the CPU time the router process used during the run.
	routerCPU time.Duration
}

func (s stats) cpuPerRequest() time.Duration {
	if s.n == 0 {
		return 0
	}
	return s.routerCPU / time.Duration(s.n)
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

// cell is one body size and concurrency level: the same load through both
// paths, one run per path and round.
type cell struct {
	size, concurrency int
	direct, routed    []stats
}

// spread is min/median/max of one figure over a cell's rounds.
type spread struct{ lo, mid, hi time.Duration }

func spreadOf(runs []stats, f func(stats) time.Duration) spread {
	if len(runs) == 0 {
		return spread{}
	}
	v := make([]time.Duration, len(runs))
	for i, r := range runs {
		v[i] = f(r)
	}
	slices.Sort(v)
	return spread{v[0], v[len(v)/2], v[len(v)-1]}
}

func (s spread) String() string {
	return fmt.Sprintf("%.2f / %.2f / %.2f", msf(s.lo), msf(s.mid), msf(s.hi))
}

// added pairs the runs of each round: routed minus direct.
func added(c cell, f func(stats) time.Duration) spread {
	n := min(len(c.direct), len(c.routed))
	diff := make([]stats, n)
	for i := range n {
		diff[i] = stats{p50: f(c.routed[i]) - f(c.direct[i])}
	}
	return spreadOf(diff, func(s stats) time.Duration { return s.p50 })
}

func printReport(w io.Writer, c config, cells []cell, cpus int) {
	fmt.Fprintf(w, "\nwarmroute with prefix routing (Qwen 3 tokenizer, KV events from 2 simulators through relays and NATS) "+
		"against Envoy alone (Envoy %s, ext_proc %s, /v1/completions of English prose, zero-latency simulators, "+
		"%d measured requests per run after %d warm-up, %d rounds alternating the paths, %d Envoy workers, "+
		"%d CPUs shared by load generator, Envoys, router, relays, NATS and simulators, loopback). "+
		"Each cell is min / median / max over the rounds, in ms.\n\n",
		harness.EnvoyVersion, c.modeName, c.requests, c.warmup, c.rounds, c.envoyCPU, cpus)
	fmt.Fprintln(w, "| body | concurrency | Envoy only p50 | Envoy only p99 | Envoy + warmroute p50 | Envoy + warmroute p99 | added p50 | added p99 | router CPU per request | requests/s per router core | router CPU per Envoy-only request |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	p50 := func(s stats) time.Duration { return s.p50 }
	p99 := func(s stats) time.Duration { return s.p99 }
	for _, ce := range cells {
		cpu := spreadOf(ce.routed, stats.cpuPerRequest)
		fmt.Fprintf(w, "| %d B | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", ce.size, ce.concurrency,
			spreadOf(ce.direct, p50), spreadOf(ce.direct, p99), spreadOf(ce.routed, p50), spreadOf(ce.routed, p99),
			added(ce, p50), added(ce, p99), cpu, perCore(cpu), spreadOf(ce.direct, stats.cpuPerRequest))
	}
	fmt.Fprintln(w, "\nRouter CPU is user plus system time of the router process (/proc/<pid>/stat) during the "+
		"Envoy + warmroute runs, divided by their requests: tokenization, keying, lookup, scoring, the ext_proc "+
		"exchange and the ingestion of the KV events those requests caused. Requests/s per router core is its inverse. "+
		"The last column is the router's CPU during the Envoy-only runs, per request: the first simulator's KV events "+
		"for those requests still reach the router (ingestion alone), plus its idle work.")
}

// perCore turns CPU per request into requests per CPU-second (min / median / max).
func perCore(s spread) string {
	rate := func(d time.Duration) string {
		if d <= 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.0f", float64(time.Second)/float64(d))
	}
	return rate(s.hi) + " / " + rate(s.mid) + " / " + rate(s.lo)
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", msf(d)) }
