package affinity

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
)

// DefaultStream names the JetStream stream that retains response ids.
const DefaultStream = "WARMROUTE_AFFINITY"

// The stream's bounds. An AffinityMessage is at most about 4.2 KiB
// (four strings of MaxAffinityString); a typical one is under 200 bytes.
const (
	streamMaxMsgs    = 1_000_000
	streamMaxBytes   = 512 << 20
	streamMaxMsgSize = 8 << 10
	// fullMargin: a stream within this many bytes (or 16 messages) of a
	// bound may have discarded ids for room.
	fullMargin = 64 << 10
)

// Replay configures a Share's start-up replay of the affinity stream.
type Replay struct {
	// Stream is the stream's name; default DefaultStream.
	Stream string
	// Timeout bounds the replay; default 30s.
	Timeout time.Duration
	// Replicas is the stream's replication factor in a cluster; default 1.
	Replicas int
}

// EnableReplay makes Start ensure the affinity stream (so the server
// retains every replica's ids for the store's MaxAge) and replay it. Call
// it before Start.
func (sh *Share) EnableReplay(r Replay) {
	r.Stream = cmp.Or(r.Stream, DefaultStream)
	r.Timeout = cmp.Or(r.Timeout, 30*time.Second)
	r.Replicas = cmp.Or(r.Replicas, 1)
	sh.replay = &r
}

// ensureStream creates or updates the stream capturing every replica's
// affinity subjects. Replicas keep publishing with core NATS: the server
// stores what reaches the stream's subjects.
func ensureStream(ctx context.Context, nc *nats.Conn, r *Replay, maxAge time.Duration) (jetstream.Stream, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("ensuring affinity stream %s: %w", r.Stream, err)
	}
	st, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: r.Stream, Subjects: []string{api.AffinitySubjectPrefix + ".>"},
		Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardOld, MaxAge: maxAge,
		MaxMsgs: streamMaxMsgs, MaxBytes: streamMaxBytes, MaxMsgSize: streamMaxMsgSize,
		Storage: jetstream.FileStorage, Replicas: r.Replicas,
		Description: "warmroute response ids, replayed by restarting router replicas",
	})
	if err != nil {
		return nil, fmt.Errorf("ensuring affinity stream %s: %w", r.Stream, err)
	}
	return st, nil
}

// catchUp ensures and replays the stream, then moves the store's window
// back to what the stream covers. Failures are counted and logged: the
// table then fills from live messages as without JetStream.
func (sh *Share) catchUp(ctx context.Context) {
	start := time.Now()
	result := "failed"
	defer func() {
		sh.store.metrics.replays.WithLabelValues(result).Inc()
		sh.store.metrics.replayDuration.Observe(time.Since(start).Seconds())
	}()
	ctx, cancel := context.WithTimeout(ctx, sh.replay.Timeout)
	defer cancel()
	st, err := ensureStream(ctx, sh.nc, sh.replay, sh.store.maxAge)
	if err != nil {
		sh.log.Warn("affinity stream unavailable; sharing live response ids only", "err", err)
		return
	}
	n, err := bus.Replay(ctx, sh.nc, "affinity", sh.replay.Stream, []string{api.AffinitySubjectPrefix + ".>"}, 1024,
		func(msg jetstream.Msg) {
			sh.store.metrics.replayMsgs.WithLabelValues(sh.applyReplayed(msg.Data())).Inc()
		})
	if err != nil {
		sh.log.Warn("affinity stream replay incomplete; following live response ids", "messages", n, "err", err)
		return
	}
	info, err := st.Info(ctx)
	if err != nil {
		sh.log.Warn("affinity stream replayed but its state is unknown; table stays incomplete", "messages", n, "err", err)
		return
	}
	now := sh.store.now()
	from := coveredFrom(info, now)
	sh.store.coveredSince(from)
	result = "partial"
	if now.Sub(from) >= sh.store.maxAge {
		result = "complete"
	}
	sh.log.Info("replayed affinity stream", "messages", n, "result", result, "covered_from", from)
}

// applyReplayed records one replayed message, returning its result label.
func (sh *Share) applyReplayed(data []byte) string {
	var m api.AffinityMessage
	if err := m.Unmarshal(data); err != nil {
		sh.log.Debug("skipping a malformed replayed affinity message", "err", err)
		return "malformed"
	}
	if m.Replica == sh.replica {
		return "own"
	}
	if !sh.store.Replayed(m.Pool, m.ID, m.Endpoint, m.Time()) {
		return "ignored"
	}
	return "applied"
}

// coveredFrom is the earliest time since which the stream, just replayed,
// retained every id published to it: its creation, no earlier than its own
// age limit reaches back, and no earlier than its oldest message when it is
// at a bound (ids may then have been discarded for room). A stream below
// its bounds has discarded for room, if ever, only ids now older than its
// age limit: since the last such discard it only lost messages to age,
// oldest first, and the oldest then kept was younger than any discarded.
func coveredFrom(info *jetstream.StreamInfo, now time.Time) time.Time {
	from := info.Created
	if a := info.Config.MaxAge; a > 0 && now.Add(-a).After(from) {
		from = now.Add(-a)
	}
	c, s := info.Config, info.State
	full := (c.MaxMsgs > 0 && s.Msgs+16 >= uint64(c.MaxMsgs)) || (c.MaxBytes > 0 && s.Bytes+fullMargin >= uint64(c.MaxBytes))
	if full && s.FirstTime.After(from) {
		from = s.FirstTime
	}
	return from
}
