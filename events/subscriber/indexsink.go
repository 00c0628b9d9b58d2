package subscriber

import (
	"errors"

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
// to the index together (index.Apply, up to applyRun events at a time), so
// a message's blocks take one lock round; AllBlocksCleared and unknown
// kinds end a run and are applied alone.
func (s *IndexSink) ApplyBatch(src Source, b *wire.Batch) {
	var run applyRun
	for i := range b.Events {
		ev := &b.Events[i]
		if ev.Kind != wire.KindBlockStored && ev.Kind != wire.KindBlockRemoved {
			s.flush(src, &run)
			s.apply(src, ev)
			continue
		}
		if s.skipGroup(src, ev) {
			s.metrics.events.WithLabelValues(ev.Kind.String(), "sparse_group").Inc()
			continue
		}
		if run.n == len(run.changes) {
			s.flush(src, &run)
		}
		run.events[run.n] = ev
		run.changes[run.n] = s.change(src, ev)
		run.n++
	}
	s.flush(src, &run)
}

// applyRun collects the events of one index.Apply call.
type applyRun struct {
	n       int
	events  [8]*wire.Event
	changes [8]index.Change
	results [8]index.ChangeResult
}

// change is ev (a BlockStored or BlockRemoved) as the index takes it.
func (s *IndexSink) change(src Source, ev *wire.Event) index.Change {
	if ev.Kind == wire.KindBlockRemoved {
		return index.Change{Removed: true, Stored: index.Stored{Hashes: ev.BlockHashes, Medium: index.ParseMedium(ev.Medium)}}
	}
	return index.Change{Stored: index.Stored{Hashes: ev.BlockHashes,
		Parent: ev.ParentHash, HasParent: ev.HasParent, Tokens: ev.TokenIDs, BlockSize: ev.BlockSize,
		Identity: identityOf(src, ev), Medium: index.ParseMedium(ev.Medium), Extra: extraOf(ev)}}
}

// flush applies run's events and counts each one's outcome as apply does.
func (s *IndexSink) flush(src Source, run *applyRun) {
	if run.n == 0 {
		return
	}
	s.ix.Apply(src.Endpoint, src.DPRank, run.changes[:run.n], run.results[:run.n])
	for i := range run.n {
		ev, res := run.events[i], &run.results[i]
		if res.Err != nil {
			s.metrics.events.WithLabelValues(ev.Kind.String(), "rejected").Inc()
			s.drop(res.Err)
			continue
		}
		// An unknown parent and removed hashes the index did not hold are
		// counted by the index; skipped blocks are not, when the event's
		// token and hash counts disagree.
		if ev.Kind == wire.KindBlockStored && res.Stored.Skipped > 0 {
			s.metrics.unkeyed.Add(float64(res.Stored.Skipped))
		}
		s.metrics.applied[ev.Kind].Inc()
	}
	*run = applyRun{}
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
