package subscriber

import (
	"time"

	"github.com/warmroute/warmroute/api"
)

// Freshness is what the router knows about one Source's event stream, for the
// scorer's freshness guard and the TTL controller.
type Freshness struct {
	// LastEvent and LastHeartbeat are when the last batch was applied and the
	// last heartbeat arrived (router clock); zero when never.
	LastEvent, LastHeartbeat time.Time
	// LastSeq is the last applied engine sequence number (valid when HasSeq).
	LastSeq uint64
	HasSeq  bool
	// Gaps counts sequence gaps seen by this router; Resets counts clears for
	// any reason (gaps, relay resets, malformed batches, relay changes).
	Gaps, Resets uint64
	// LastReset is when the source was last cleared; zero when never.
	LastReset time.Time
	// EngineConnected is the relay's last report of its engine connection;
	// EngineUnknown that the relay had no evidence either way.
	EngineConnected, EngineUnknown bool
	// Relay is the relay instance last heard from.
	Relay string
	// Interval is the relay's heartbeat period.
	Interval time.Duration
	// Load is the engine's own load from the last heartbeat, if scraped.
	Load *api.EngineLoad
}

// lastSeen is the later of the last event and the last heartbeat.
func (f *Freshness) lastSeen() time.Time {
	if f.LastEvent.After(f.LastHeartbeat) {
		return f.LastEvent
	}
	return f.LastHeartbeat
}

// assumedInterval is the heartbeat interval of a source heard only through
// batches so far: the relay's default (relay.DefaultHeartbeatInterval).
const assumedInterval = 2 * time.Second

// interval is the source's heartbeat period, assumedInterval before the
// first heartbeat.
func (f *Freshness) interval() time.Duration {
	if f.Interval <= 0 {
		return assumedInterval
	}
	return f.Interval
}

// streamState is the apply loop's private per-Source state.
type streamState struct {
	fresh   Freshness
	expect  uint64 // next sequence number expected
	inOrder bool   // expect is meaningful
	up      bool   // SourceUp was called

	// Snapshot sync state (sync.go). epoch is the relay mirror epoch of
	// the state held (from a snapshot, or a reset or stream start that
	// explained a change); hbEpoch the last one a heartbeat named.
	epoch, syncedEpoch, hbEpoch uint64
	syncing, syncExcludes       bool // syncing and syncExcludes are read by refreshDown under s.mu
	syncAttempted               bool
	// syncOnBeat asks for a sync at the source's next heartbeat: after
	// the router's NATS connection returned (its relay may not be back yet).
	syncOnBeat   bool
	syncGen      uint64
	syncBuffer   []inbound
	syncOverflow bool
	// aheadSeq is the sequence the previous heartbeat named when it was
	// ahead of what the Source applied (hbgap.go); ahead says it was.
	aheadSeq uint64
	ahead    bool
}
