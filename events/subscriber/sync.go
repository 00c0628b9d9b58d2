package subscriber

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/snapshot"
)

// Replacer is a Sink that can take a Source's whole state from a relay's
// snapshot (IndexSink is one). With a Replacer the subscriber syncs each
// Source whose relay has a mirror (its heartbeats carry an epoch): on first
// contact, after a NATS reconnect, when an expired endpoint returns, on an
// epoch change, on a gap and after a relay buffer overflow. Without one, or
// for relays without a mirror, it follows the live stream only.
type Replacer interface {
	Sink
	// Rebuilder starts a rebuild of src's state. It is filled from the
	// snapshot on another goroutine than the Sink's, then committed on the
	// Sink's.
	Rebuilder(src Source) SourceRebuild
}

// SourceRebuild accumulates one snapshot. AddChunk is called from the
// fetching goroutine, in chunk order, and must not touch shared state;
// Commit from the Sink's goroutine, once, to swap the state in.
type SourceRebuild interface {
	AddChunk(c *snapshot.Chunk)
	// Commit replaces the Source's state and returns how many held blocks
	// it now has.
	Commit() (blocks int, err error)
}

// Sync reasons (label reason of subscriber_syncs_total).
const (
	syncStart     = "start"     // first contact with a Source (router start, new relay)
	syncReconnect = "reconnect" // the router's NATS connection came back
	syncExpired   = "expired"   // an endpoint whose relays had expired is heard again
	syncEpoch     = "epoch"     // the relay's mirror epoch changed without a reset seen
	syncGap       = "gap"       // a sequence gap the router cannot explain
	syncOverflow  = "overflow"  // the relay dropped batches while NATS was away
)

// Sync results (label result).
const (
	syncOK           = "ok"
	syncTimeout      = "timeout"       // the relay stopped answering mid-snapshot
	syncNoResponders = "no_responders" // nobody answers the snapshot subject
	syncRefused      = "refused"
	syncFailed       = "failed" // malformed chunks or the sink refused the state
	syncAbandoned    = "abandoned"
)

// Timing of a sync, derived rather than configured: a relay answers at
// once, and a chunk is at most one NATS max payload.
const (
	syncAttempts = 3
	syncBackoff  = 200 * time.Millisecond
	// maxSyncBuffer bounds the live messages held for one Source while it
	// syncs; past it the sync's result is applied and another sync follows.
	maxSyncBuffer = 65536
)

// syncResult is what a fetch goroutine hands back to the apply loop.
type syncResult struct {
	src     Source
	gen     uint64 // the streamState.syncGen it answers
	reason  string
	started time.Time
	header  snapshot.Header
	rebuild SourceRebuild
	err     error
}

// requestSync starts a sync of src unless one runs. exclude keeps the
// endpoint out of routing until it completes (a returning endpoint: its
// state must be re-synced before it is a candidate). Apply loop only.
func (s *Subscriber) requestSync(src Source, st *streamState, reason string, exclude bool) {
	if s.replacer == nil || st.syncing {
		return
	}
	s.syncSeq++ // subscriber-wide, so a late answer never matches a later stream's sync
	s.mu.Lock()
	st.syncing, st.syncExcludes, st.syncAttempted = true, exclude, true
	st.syncOnBeat = false // this sync covers a pending reconnect
	st.syncGen = s.syncSeq
	s.refreshDown()
	s.mu.Unlock()
	gen := st.syncGen
	rb := s.replacer.Rebuilder(src)
	s.syncs.Go(func() {
		res := s.fetchSnapshot(src, rb)
		res.gen, res.reason = gen, reason
		select {
		case s.syncDone <- res:
		case <-s.syncCtx.Done():
		}
	})
}

// fetchSnapshot requests src's snapshot, retrying a relay that stopped
// mid-snapshot or sent damaged chunks; a rebuild that saw chunks of a
// failed attempt is started afresh.
func (s *Subscriber) fetchSnapshot(src Source, rb SourceRebuild) syncResult {
	res := syncResult{src: src, started: time.Now()}
	subj, err := api.SnapshotSubject(src.Model, src.Endpoint, src.DPRank)
	if err != nil {
		res.err = err
		return res
	}
	for attempt := range syncAttempts {
		if attempt > 0 {
			rb = s.replacer.Rebuilder(src)
			select {
			case <-time.After(syncBackoff):
			case <-s.syncCtx.Done():
				res.err = s.syncCtx.Err()
				return res
			}
		}
		res.header, res.err = snapshot.Fetch(s.syncCtx, s.nc, subj, s.cfg.SyncChunkTimeout, func(c *snapshot.Chunk) error {
			rb.AddChunk(c)
			return nil
		})
		res.rebuild = rb
		if res.err == nil || errors.Is(res.err, snapshot.ErrNoResponders) || errors.Is(res.err, snapshot.ErrRefused) ||
			s.syncCtx.Err() != nil {
			return res
		}
	}
	return res
}

// finishSync applies a sync's result on the apply loop: the snapshot
// replaces the Source's state, then the live messages buffered meanwhile
// are applied from the snapshot's sequence on. A failed sync leaves the
// Source on its live stream, as without snapshots.
func (s *Subscriber) finishSync(res syncResult) {
	s.mu.Lock()
	st, ok := s.streams[res.src]
	s.mu.Unlock()
	if !ok || !st.syncing || st.syncGen != res.gen {
		s.metrics.syncs.WithLabelValues(res.reason, syncAbandoned).Inc()
		return
	}
	result := syncResultLabel(res.err)
	blocks := 0
	if res.err == nil {
		var err error
		if blocks, err = res.rebuild.Commit(); err != nil {
			result = syncFailed
			res.err = err
		}
	}
	s.metrics.syncs.WithLabelValues(res.reason, result).Inc()
	s.metrics.syncSeconds.Observe(time.Since(res.started).Seconds())
	if res.err == nil {
		s.metrics.syncBlocks.Add(float64(blocks))
		h := res.header
		st.epoch, st.syncedEpoch = h.Epoch, h.Epoch
		st.expect, st.inOrder = h.Seq+1, h.HasSeq
		s.mu.Lock()
		if h.HasSeq {
			st.fresh.LastSeq, st.fresh.HasSeq = h.Seq, true
		}
		s.mu.Unlock()
		s.log.Info("synced endpoint from its relay's snapshot", "endpoint", res.src.Endpoint, "dp_rank", res.src.DPRank,
			"reason", res.reason, "blocks", blocks, "seq", h.Seq, "took", time.Since(res.started))
	} else {
		if st.hbEpoch != 0 {
			st.epoch = st.hbEpoch // follow the live stream without asking again each heartbeat
		}
		s.log.Warn("endpoint sync failed; following its live stream", "endpoint", res.src.Endpoint,
			"dp_rank", res.src.DPRank, "reason", res.reason, "err", res.err)
	}
	buffered, overflowed := st.syncBuffer, st.syncOverflow
	s.mu.Lock()
	st.syncing, st.syncExcludes, st.syncBuffer, st.syncOverflow = false, false, nil, false
	s.refreshDown()
	s.mu.Unlock()
	for _, in := range buffered {
		if res.err == nil {
			in.synced++
		}
		s.handle(in)
	}
	if overflowed {
		s.requestSync(res.src, st, syncGap, false)
	}
}

// holdDuringSync keeps a live message of a syncing Source for after the
// snapshot.
func (s *Subscriber) holdDuringSync(st *streamState, in inbound) {
	if len(st.syncBuffer) >= maxSyncBuffer {
		st.syncOverflow = true
		return
	}
	st.syncBuffer = append(st.syncBuffer, in)
}

func syncResultLabel(err error) string {
	switch {
	case err == nil:
		return syncOK
	case errors.Is(err, snapshot.ErrTimeout):
		return syncTimeout
	case errors.Is(err, snapshot.ErrNoResponders):
		return syncNoResponders
	case errors.Is(err, snapshot.ErrRefused):
		return syncRefused
	}
	return syncFailed
}

// syncAfterReconnect marks every Source whose relay has a mirror to sync at
// its next heartbeat: whatever was published while the router's NATS
// connection was away may be lost. Asking at once would race the relays'
// own reconnects (a relay not back yet has no responder).
func (s *Subscriber) syncAfterReconnect() {
	s.mu.Lock()
	for _, st := range s.streams {
		if st.epoch != 0 || st.hbEpoch != 0 {
			st.syncOnBeat = true
		}
	}
	s.mu.Unlock()
}

// watchReconnects tells the apply loop when the NATS connection is back
// after being lost, and keeps deafSince and heardBack for expire.
func (s *Subscriber) watchReconnects(ctx context.Context) {
	ch := s.nc.StatusChanged(nats.DISCONNECTED, nats.RECONNECTING, nats.CONNECTED)
	defer s.nc.RemoveStatusListener(ch)
	for {
		select {
		case <-ctx.Done():
			return
		case st := <-ch:
			switch {
			case st == nats.DISCONNECTED || st == nats.RECONNECTING:
				s.deafSince.CompareAndSwap(0, s.now().UnixNano())
			case st == nats.CONNECTED && s.deafSince.Load() != 0:
				s.heardBack.Store(s.now().UnixNano())
				s.deafSince.Store(0)
				select {
				case s.reconnected <- struct{}{}:
				default: // one pending resync covers any number of reconnects
				}
			}
		}
	}
}

// eventEpoch reads a message's epoch header; 0 when absent (older relay,
// or a relay without a mirror).
func eventEpoch(m *nats.Msg) uint64 {
	v := m.Header.Get(api.EventEpochHeader)
	if v == "" {
		return 0 // no epoch (a relay without a mirror), without ParseUint's error allocation
	}
	e, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0
	}
	return e
}
