// Package memlat measures this machine's memory latency, the floor under
// the index's hot paths: every block the router stores, removes or looks
// up in a large index touches a few cache lines at random addresses, and a
// cache line that misses every cache costs one DRAM round trip however
// little code touches it.
//
// The package has no code, only benchmarks (memlat_test.go): a dependent
// pointer chase (each load's address comes from the previous load, so the
// loads cannot overlap: latency) and several independent chases run
// together (the loads overlap as far as the core's miss buffers allow:
// memory-level parallelism), over working sets from cache-resident to
// far larger than the last-level cache. README.md gives this machine's
// numbers and how the index's figures relate to them.
package memlat
