package subscriber

import (
	"errors"
	"slices"
	"sync"

	"github.com/warmroute/warmroute/events/wire"
	"github.com/warmroute/warmroute/index"
)

// IndexSink applies engine batches to an *index.Index: it is the Sink a
// router's Subscriber feeds. Every block or event the index could not take
// is counted by reason in warmroute_events_sink_dropped_total, because a
// silently shrinking index looks exactly like a cold cache.
//
// A BlockStored is keyed under the identity the engine computed it with: its
// lora_name when set, otherwise the Source's model (the served model name the
// relay publishes under, which is also what requests name), and the cache
// salt the engine reports; blocks with multimodal extra keys are keyed apart
// from text. Only full-attention KV cache groups are followed (see tracked).
//
// Safe for concurrent use (the index is); the Subscriber calls it from one
// goroutine anyway. Build it with NewIndexSink; the zero value is not usable.
type IndexSink struct {
	ix      *index.Index
	metrics *sinkMetrics
	sparse  sparseGroups
}

// NewIndexSink returns a sink writing to ix, counting into m (from
// NewMetrics, shared with the Subscriber; nil: unregistered metrics).
func NewIndexSink(ix *index.Index, m *Metrics) *IndexSink {
	if m == nil {
		m, _ = NewMetrics(nil) // nothing to register, so no error
	}
	return &IndexSink{ix: ix, metrics: &m.sink}
}

// ApplyBatch applies b's events in order. Runs of stores and removals go
// to the index together (index.Apply, up to runMax changes at a time), so
// a message's blocks share the index's lock rounds; consecutive removals
// on one medium go as one change (see merge); AllBlocksCleared and unknown
// kinds end a run and are applied alone.
func (s *IndexSink) ApplyBatch(src Source, b *wire.Batch) {
	run := runPool.Get().(*applyRun)
	defer runPool.Put(run)
	for i := range b.Events {
		ev := &b.Events[i]
		if ev.Kind != wire.KindBlockStored && ev.Kind != wire.KindBlockRemoved {
			s.flush(src, run)
			s.apply(src, ev)
			continue
		}
		if s.skipGroup(src, ev) {
			s.metrics.events.WithLabelValues(ev.Kind.String(), "sparse_group").Add(float64(ev.EngineEvents()))
			continue
		}
		if ev.Kind == wire.KindBlockRemoved && run.merge(ev) {
			continue
		}
		if len(run.changes) == runMax {
			s.flush(src, run)
		}
		run.changes = append(run.changes, index.Change{})
		s.fill(&run.changes[len(run.changes)-1], src, ev)
		run.events = append(run.events, int32(ev.EngineEvents()))
		run.merged = -1
	}
	s.flush(src, run)
}

// runMax is how many changes one index.Apply call takes at most, and
// mergeMax how many hashes a run's merged removals hold at most; a pooled
// run thus keeps at most about 250 KB.
const (
	runMax   = 1024
	mergeMax = 4096
)

// applyRun collects the changes of one index.Apply call; ApplyBatch takes
// one from runPool, so steady ingestion allocates none.
type applyRun struct {
	changes []index.Change
	results []index.ChangeResult
	// events is how many of the engine's events each change stands for
	// (a folded removal, wire.Event.Folded, stands for several).
	events []int32
	// hashes holds merged removals' hashes; merged is where the last
	// change's hashes start in it, or -1 when the last change was not
	// merged into.
	hashes []uint64
	merged int
}

var runPool = sync.Pool{New: func() any { return &applyRun{merged: -1} }}

// merge appends removal ev to the run's last change when that is a removal
// on the same medium, and reports whether it did. vLLM reports each block
// its cache evicts as an event of its own (a one-hash BlockRemoved), before
// the BlockStored of the blocks that took the room: merged, a step's
// evictions cost the index one change, whose reverse-table reads it issues
// together, rather than one change and one serial miss each. Removing
// hashes in one event or in consecutive ones on one medium is the same to
// the index (Remove applies them in order either way); the metrics still
// count every event.
func (run *applyRun) merge(ev *wire.Event) bool {
	n := len(run.changes)
	if n == 0 {
		return false
	}
	last := &run.changes[n-1]
	if !last.Removed || last.Medium != index.ParseMedium(ev.Medium) {
		return false
	}
	add := len(ev.BlockHashes)
	if run.merged < 0 {
		add += len(last.Hashes)
	}
	if len(run.hashes)+add > mergeMax {
		return false
	}
	if run.merged < 0 {
		// The first merge into this change: its hashes move into the
		// run's buffer (they are the batch's, which the buffer outlives).
		run.merged = len(run.hashes)
		run.hashes = append(run.hashes, last.Hashes...)
	}
	run.hashes = append(run.hashes, ev.BlockHashes...)
	last.Hashes = run.hashes[run.merged:len(run.hashes):len(run.hashes)]
	run.events[n-1] += int32(ev.EngineEvents())
	return true
}

// fill sets c to ev (a BlockStored or BlockRemoved) as the index takes it.
func (s *IndexSink) fill(c *index.Change, src Source, ev *wire.Event) {
	if ev.Kind == wire.KindBlockRemoved {
		c.Removed, c.Hashes, c.Medium = true, ev.BlockHashes, index.ParseMedium(ev.Medium)
		return
	}
	c.Hashes, c.Parent, c.HasParent, c.Tokens, c.BlockSize = ev.BlockHashes, ev.ParentHash, ev.HasParent, ev.TokenIDs, ev.BlockSize
	c.Identity, c.Medium, c.Extra = identityOf(src, ev), index.ParseMedium(ev.Medium), extraOf(ev)
}

// flush applies run's events and counts each one's outcome as apply does.
func (s *IndexSink) flush(src Source, run *applyRun) {
	n := len(run.changes)
	if n == 0 {
		return
	}
	run.results = slices.Grow(run.results[:0], n)[:n]
	s.ix.Apply(src.Endpoint, src.DPRank, run.changes, run.results)
	for i := range n {
		res, events := &run.results[i], float64(run.events[i])
		kind := wire.KindBlockStored
		if run.changes[i].Removed {
			kind = wire.KindBlockRemoved
		}
		if res.Err != nil {
			s.metrics.events.WithLabelValues(kind.String(), "rejected").Add(events)
			s.drop(res.Err)
			continue
		}
		// An unknown parent and removed hashes the index did not hold are
		// counted by the index; skipped blocks are not, when the event's
		// token and hash counts disagree.
		if kind == wire.KindBlockStored && res.Stored.Skipped > 0 {
			s.metrics.unkeyed.Add(float64(res.Stored.Skipped))
		}
		s.metrics.applied[kind].Add(events)
	}
	// Drop the references to the batch's arenas, which go back to their
	// pool, and keep the buffers for the next run.
	clear(run.changes)
	clear(run.results)
	run.changes, run.results, run.events, run.hashes = run.changes[:0], run.results[:0], run.events[:0], run.hashes[:0]
	run.merged = -1
}

// ClearSource forgets what src's rank stored. Predictions for the endpoint
// stay: the endpoint is still there and may yet confirm them.
func (s *IndexSink) ClearSource(src Source) {
	if _, err := s.ix.ClearRank(src.Endpoint, src.DPRank); err != nil {
		s.drop(err)
	}
}

// ClearEndpoint forgets everything about an endpoint that left: every
// rank's blocks and every prediction.
func (s *IndexSink) ClearEndpoint(endpoint string) {
	s.sparse.forget(endpoint)
	if _, err := s.ix.ClearEndpoint(endpoint); err != nil {
		s.drop(err)
	}
}

// apply applies an event that ends a run: AllBlocksCleared, or a kind the
// sink does not know.
func (s *IndexSink) apply(src Source, ev *wire.Event) {
	var err error
	switch ev.Kind {
	case wire.KindAllBlocksCleared:
		_, err = s.ix.ClearRank(src.Endpoint, src.DPRank)
	default:
		err = errUnknownKind
	}
	if err != nil {
		s.metrics.events.WithLabelValues(ev.Kind.String(), "rejected").Inc()
		s.drop(err)
		return
	}
	s.metrics.applied[ev.Kind].Inc()
}

// errUnknownKind guards against a Kind added to the decoder but not here.
var errUnknownKind = errors.New("event kind not handled by the index sink")

// drop counts err under its reason, unless the index counts it already.
func (s *IndexSink) drop(err error) {
	if reason := dropReason(err); reason != "" {
		s.metrics.dropped.WithLabelValues(reason).Inc()
	}
}

// dropReason maps an index error to a bounded label value; "" when the
// index counts it itself.
func dropReason(err error) string {
	switch {
	case errors.Is(err, index.ErrBlockSize):
		return "" // counted by the index: warmroute_index_block_size_mismatch_total
	case errors.Is(err, index.ErrTokenRange):
		return "token_range"
	case errors.Is(err, index.ErrRank):
		return "rank"
	case errors.Is(err, index.ErrEndpoint):
		return "endpoint"
	case errors.Is(err, errUnknownKind):
		return "unknown_kind"
	}
	return "other"
}
