package subscriber

import (
	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/wire"
)

// Source identifies one engine event stream: an endpoint's data-parallel rank
// serving a model. Each Source has its own sequence space.
type Source struct {
	Model    string
	Endpoint string // "ip:port"
	DPRank   int
}

// Sink is what the subscriber feeds: the index, through IndexSink. It is an
// interface so tests and tools can observe the stream without an index.
//
// The subscriber calls a Sink from a single goroutine, in order per Source,
// and expects each call to return quickly (no I/O). b and its slices are only
// valid during the call. b is decoded with wire.Batch.FoldRemovals: a run of
// vLLM's one-hash BlockRemoved events arrives as one event whose Folded
// counts the further engine events it stands for.
type Sink interface {
	// ApplyBatch applies one engine batch, in sequence order.
	ApplyBatch(src Source, b *wire.Batch)
	// ClearSource forgets every block learnt from src: its engine restarted,
	// lost events, or left.
	ClearSource(src Source)
}

// Membership is told when a stream appears (first heartbeat) and disappears
// (heartbeats stopped or the relay left). It is called from the same
// goroutine as the Sink and must return quickly.
type Membership interface {
	SourceUp(src Source, h api.Heartbeat)
	SourceDown(src Source, reason string)
}
