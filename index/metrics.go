package index

import "github.com/prometheus/client_golang/prometheus"

// RegisterMetrics exposes ix's Stats on reg as warmroute_index_* metrics,
// read at scrape time so the index's hot paths never touch Prometheus.
// Labels are bounded sets (entry kind, outcome kind).
func RegisterMetrics(reg prometheus.Registerer, ix *Index) error {
	return reg.Register(&collector{ix: ix})
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
	descOutcomes       = desc("speculative_outcomes_total", "Speculative entries of this router's decisions ended, by outcome.", "outcome")
	descRemoteOutcomes = desc("remote_speculative_outcomes_total", "Speculative entries from other replicas' predictions ended, by outcome.", "outcome")
)

type collector struct{ ix *Index }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descKeys
	ch <- descEntries
	ch <- descBytes
	ch <- descLimit
	for _, d := range descCounts {
		ch <- d.d
	}
	ch <- descOutcomes
	ch <- descRemoteOutcomes
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	st := c.ix.Stats()
	gauge := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	gauge(descKeys, st.Keys)
	gauge(descEntries, st.Entries, "confirmed")
	gauge(descEntries, st.Speculative, "speculative")
	gauge(descBytes, st.Bytes)
	gauge(descLimit, c.ix.opts.MaxBytes)
	for _, d := range descCounts {
		ch <- prometheus.MustNewConstMetric(d.d, prometheus.CounterValue, float64(d.get(&st)))
	}
	for k, v := range st.Outcomes {
		ch <- prometheus.MustNewConstMetric(descOutcomes, prometheus.CounterValue, float64(v), OutcomeKind(k).String())
		ch <- prometheus.MustNewConstMetric(descRemoteOutcomes, prometheus.CounterValue,
			float64(st.RemoteOutcomes[k]), OutcomeKind(k).String())
	}
}
