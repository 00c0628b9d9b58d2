// Package prefetch asks the CPU to start loading a cache line without
// waiting for it.
//
// The index's hot paths (a Lookup's batch of keys, an engine message's
// stores and removals) know every random slot they will read before they
// read any, and start all their cache misses first so that the misses
// overlap. A plain load does that only as far as the CPU's reorder window
// reaches: a load cannot retire until its line arrives, so a few misses
// fill the window and the rest of the batch waits behind them. A prefetch
// instruction retires at once. Go exposes no prefetch outside its runtime,
// so Line is two instructions of assembly on amd64 (PREFETCHT0) and arm64
// (PRFM PLDL1KEEP), and a plain load elsewhere; the call costs a few
// instructions. BenchmarkBatch measures the difference against loads.
package prefetch
