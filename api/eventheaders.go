package api

// NATS header names on messages published to EventSubject. The payload of a
// batch message is the engine's msgpack bytes, unchanged.
const (
	// EventKindHeader says what the message is: EventKindBatch or EventKindReset.
	EventKindHeader = "Warmroute-Kind"
	// EventEndpointHeader repeats the endpoint ("ip:port") in clear text.
	EventEndpointHeader = "Warmroute-Endpoint"
	// EventSeqHeader is the engine's sequence number in decimal. For a reset it
	// is the first sequence number of the stream that follows the reset.
	EventSeqHeader = "Warmroute-Seq"
	// EventDPRankHeader is the engine's data-parallel rank in decimal; each
	// rank has its own sequence space.
	EventDPRankHeader = "Warmroute-Dp-Rank"
	// EventRelayHeader identifies the relay instance that published the
	// message, so routers can tell relays apart in logs and metrics.
	EventRelayHeader = "Warmroute-Relay"
	// EventResetReasonHeader is one of the ResetReason values on a reset.
	EventResetReasonHeader = "Warmroute-Reset-Reason"
	// EventStreamStartHeader is "true" on a batch with sequence number 0, the
	// first an engine process publishes: nothing cached at the endpoint came
	// before it, so a router holding another stream's state for the endpoint
	// clears it and applies from this batch on. A restarted relay that reads
	// the engine's replay buffer from the start republishes it this way.
	EventStreamStartHeader = "Warmroute-Stream-Start"
	// EventEpochHeader is the relay mirror's epoch in decimal (see
	// Heartbeat.Epoch) on batches and resets; absent from relays without a
	// mirror.
	EventEpochHeader = "Warmroute-Epoch"
)

// Values of EventKindHeader.
const (
	// EventKindBatch carries one engine batch.
	EventKindBatch = "batch"
	// EventKindReset tells routers that the endpoint's cache state is unknown:
	// they must clear it and resume from the sequence in EventSeqHeader.
	EventKindReset = "reset"
)

// ResetReason says why a relay declared an endpoint reset. The set is closed
// so it can be a metric label.
type ResetReason string

// Reset reasons.
const (
	// ResetGap: batches were lost and the engine's replay could not fill them.
	ResetGap ResetReason = "gap"
	// ResetRestart: the engine's sequence went backwards (the engine restarted).
	ResetRestart ResetReason = "restart"
	// ResetReconnect: the relay lost its connection to the engine, and the
	// engine behind the new connection is not provably the one it followed
	// (its replay buffer no longer holds the last batch forwarded, byte for
	// byte): the engine restarted, or more was lost than the buffer keeps.
	ResetReconnect ResetReason = "reconnect"
	// ResetOverflow: the relay dropped batches from its bounded buffer while
	// NATS was unreachable.
	ResetOverflow ResetReason = "overflow"
)
