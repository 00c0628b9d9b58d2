package relay

import (
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/snapshot"
	"github.com/warmroute/warmroute/events/wire"
)

// mirrorApply applies a forwarded batch (nil: undecodable) to the mirror.
func (r *Relay) mirrorApply(seq uint64, b *wire.Batch) {
	if r.mirror != nil {
		r.mirror.apply(seq, b)
	}
}

// serveSnapshots answers snapshot requests for this relay's endpoint from
// the mirror; nil subscription when the mirror is disabled. The subject has
// a rank token: relays of the endpoint's other ranks share the wildcard and
// stay silent for ranks not theirs.
func (r *Relay) serveSnapshots() (*nats.Subscription, error) {
	if r.mirror == nil {
		return nil, nil
	}
	subj, _ := api.SnapshotWildcard(r.cfg.Model, r.cfg.Endpoint) // model checked by Validate
	sub, err := r.nc.Subscribe(subj, r.answerSnapshot)
	if err != nil {
		return nil, fmt.Errorf("subscribing to snapshot requests %s: %w", subj, err)
	}
	return sub, nil
}

// answerSnapshot runs on the subscription's goroutine, one request at a
// time. Encoding holds the mirror's lock (the engine loop waits meanwhile:
// about 0.1 s per million blocks, see the README); publishing does not.
func (r *Relay) answerSnapshot(msg *nats.Msg) {
	rank, err := api.ParseSnapshotRank(msg.Subject)
	if err != nil || int64(rank) != r.rank.Load() || msg.Reply == "" {
		return
	}
	chunks, blocks := r.mirror.snapshot(snapshotChunkSize(r.nc))
	if err := snapshot.Reply(r.nc, msg.Reply, chunks); err != nil {
		r.metrics.snapshots.WithLabelValues("failed").Inc()
		r.log.Warn("answering a snapshot request", "err", err)
		return
	}
	r.metrics.snapshots.WithLabelValues("sent").Inc()
	r.metrics.snapshotBlocks.Add(float64(blocks))
	r.log.Debug("answered a snapshot request", "chunks", len(chunks), "blocks", blocks)
}

// snapshotChunkSize keeps chunks under the server's max payload, leaving
// room for the protocol line.
func snapshotChunkSize(nc *nats.Conn) int {
	mp := int(nc.MaxPayload())
	if mp <= 0 {
		mp = 1 << 20
	}
	return max(mp-1024, 4096)
}

func unsubscribe(sub *nats.Subscription) {
	if sub != nil {
		_ = sub.Unsubscribe()
	}
}
