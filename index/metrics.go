package index

import (
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics exposes one Index's Stats as warmroute_index_* metrics, read at
// scrape time so the index's hot paths never touch Prometheus. Labels are
// bounded sets (entry kind, ending). Pass it as Options.Metrics; until New
// binds it to an index it exports nothing. Safe for concurrent use; a nil
// *Metrics is valid and exports nothing.
type Metrics struct{ ix atomic.Pointer[Index] }

// NewMetrics creates the index's collector and registers it on reg; a nil
// reg registers nothing.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{}
	if reg == nil {
		return m, nil
	}
	if err := reg.Register(m); err != nil {
		return nil, fmt.Errorf("registering index metrics: %w", err)
	}
	return m, nil
}

// bind makes m export ix's stats; a Metrics serves one index.
func (m *Metrics) bind(ix *Index) error {
	if m == nil || m.ix.CompareAndSwap(nil, ix) {
		return nil
	}
	return fmt.Errorf("binding index metrics: %w", ErrMetricsInUse)
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName("warmroute", "index", name), help, labels, nil)
}

var (
	descKeys    = desc("keys", "Block keys with at least one confirmed entry.")
	descEntries = desc("entries", "Live (block, endpoint) entries by kind: confirmed or speculative.", "kind")
	descBytes   = desc("memory_bytes", "Estimated memory used by the index.")
	descLimit   = desc("memory_limit_bytes", "Configured memory bound; least recently useful keys are evicted above it.")
	descCounts  = []struct {
		d   *prometheus.Desc
		get func(*Stats) int64
	}{
		{desc("stored_blocks_total", "Blocks recorded from BlockStored events."), func(s *Stats) int64 { return s.StoredBlocks }},
		{desc("removed_blocks_total", "Block copies removed by BlockRemoved events."), func(s *Stats) int64 { return s.RemovedBlocks }},
		{desc("unknown_removed_total", "Removed hashes the index did not hold (evicted, or stored before start-up)."), func(s *Stats) int64 { return s.UnknownRemoved }},
		{desc("unknown_parent_total", "BlockStored events whose parent hash was unknown; their blocks were keyed as a sequence start."), func(s *Stats) int64 { return s.UnknownParent }},
		{desc("reannounced_blocks_total", "Stored blocks the holder already held on that medium under the same hash (announced again, stored once)."), func(s *Stats) int64 { return s.Reannounced }},
		{desc("block_size_mismatch_total", "BlockStored events rejected because their block size differs from the index's."), func(s *Stats) int64 { return s.BlockSizeMismatch }},
		{desc("length_mismatch_total", "BlockStored events whose token count disagreed with their hash count."), func(s *Stats) int64 { return s.LengthMismatch }},
		{desc("unkeyed_blocks_total", "Token-less stored blocks whose hash was unknown, so they could not be keyed."), func(s *Stats) int64 { return s.Unkeyed }},
		{desc("cleared_entries_total", "Confirmed entries dropped by AllBlocksCleared or endpoint resets."), func(s *Stats) int64 { return s.ClearedEntries }},
		{desc("evicted_keys_total", "Keys evicted under the memory bound."), func(s *Stats) int64 { return s.EvictedKeys }},
		{desc("evicted_entries_total", "Confirmed entries evicted under the memory bound."), func(s *Stats) int64 { return s.EvictedEntries }},
		{desc("speculated_blocks_total", "Speculative entries created by routing decisions."), func(s *Stats) int64 { return s.Speculated }},
		{desc("withdrawn_blocks_total", "Speculative entries withdrawn because the request that made them failed."), func(s *Stats) int64 { return s.Withdrawn }},
		{desc("remote_speculated_blocks_total", "Speculative entries created from other router replicas' predictions."), func(s *Stats) int64 { return s.RemoteSpeculated }},
	}
	// The endings of this router's own predictions are counted by
	// warmroute_ttl_endings_total, per endpoint and model; the index
	// counts only the endings ttl does not see.
	descRemoteEndings = desc("remote_endings_total", "Speculative entries from other replicas' predictions ended, by ending.", "ending")
)

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- descKeys
	ch <- descEntries
	ch <- descBytes
	ch <- descLimit
	for _, d := range descCounts {
		ch <- d.d
	}
	ch <- descRemoteEndings
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	ix := m.ix.Load()
	if ix == nil {
		return
	}
	st := ix.Stats()
	gauge := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	gauge(descKeys, st.Keys)
	gauge(descEntries, st.Entries, "confirmed")
	gauge(descEntries, st.Speculative, "speculative")
	gauge(descBytes, st.Bytes)
	gauge(descLimit, ix.opts.MaxBytes)
	for _, d := range descCounts {
		ch <- prometheus.MustNewConstMetric(d.d, prometheus.CounterValue, float64(d.get(&st)))
	}
	for k, v := range st.RemoteOutcomes {
		ch <- prometheus.MustNewConstMetric(descRemoteEndings, prometheus.CounterValue, float64(v), OutcomeKind(k).String())
	}
}
