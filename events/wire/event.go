package wire

// Kind says which engine event an Event holds.
type Kind uint8

// Event kinds. KindUnknown never appears in a decoded Batch: unknown tags are
// skipped and counted in Batch.Skipped.
const (
	KindUnknown Kind = iota
	KindBlockStored
	KindBlockRemoved
	KindAllBlocksCleared
)

func (k Kind) String() string {
	switch k {
	case KindBlockStored:
		return "BlockStored"
	case KindBlockRemoved:
		return "BlockRemoved"
	case KindAllBlocksCleared:
		return "AllBlocksCleared"
	}
	return "unknown"
}

// Batch is one engine publication: the events of one scheduler step.
//
// A Batch decoded by a Decoder borrows memory from it: its slices stay valid
// until the next Decode into the same Batch. Copy what must outlive that.
// A Batch is not safe for concurrent use; the zero value is an empty batch.
type Batch struct {
	// TS is the engine's wall-clock time of the step, in seconds since the epoch.
	TS float64
	// Events are the known events in publication order.
	Events []Event
	// DPRank is the engine's data-parallel rank when the batch names one.
	DPRank int
	// HasDPRank reports whether the payload carried a data-parallel rank.
	HasDPRank bool
	// Skipped counts events with an unknown tag that were left out.
	Skipped int
	// FoldRemovals, set by the caller and kept across decodes, reads a run
	// of consecutive one-hash BlockRemoved events as one Event: vLLM
	// reports each block its cache evicts as an event of its own, and a
	// consumer that removes hashes in order (the index does) need not pay
	// for an Event, a dispatch and a change per hash. The events folded
	// into one are those decodeRemovedFast reads (vLLM's layout), on one
	// medium and group, one after another; Event.Folded counts them.
	FoldRemovals bool
	// foldable reports, with FoldRemovals set, that the last event was
	// read by decodeRemovedFast, so its hashes end the hashes arena and the
	// next such event may fold into it.
	foldable bool
	// foldAt and foldLen are where, in the payload being decoded, the
	// event that made the batch foldable starts and how long it is, when
	// its hash took msgpack's uint64 form (foldLen is 0 otherwise): the
	// template foldRemoved compares the next events with.
	foldAt, foldLen int

	hashes []uint64 // arena for Events[i].BlockHashes
	tokens []uint32 // arena for Events[i].TokenIDs
	extras [][]byte // arena for Events[i].ExtraKeys

	lookahead [][]uint32 // arena for Events[i].Lookahead
}

// Blocks returns the number of block hashes stored or removed in the batch.
func (b *Batch) Blocks() int {
	n := 0
	for i := range b.Events {
		n += len(b.Events[i].BlockHashes)
	}
	return n
}

func (b *Batch) reset() {
	b.TS, b.DPRank, b.HasDPRank, b.Skipped, b.foldable = 0, 0, false, 0, false
	b.Events = b.Events[:0]
	b.hashes = b.hashes[:0]
	b.tokens = b.tokens[:0]
	b.extras = b.extras[:0]
	b.lookahead = b.lookahead[:0]
}

// Event is one BlockStored, BlockRemoved or AllBlocksCleared. Fields that do
// not apply to the Kind, and optional fields the engine sent as nil or
// omitted, hold their zero value.
type Event struct {
	Kind Kind
	// BlockHashes are the engine's block hashes, normalised to uint64: uint64
	// as is, negative int64 by two's complement, bin as its last 8 bytes
	// big-endian. They identify blocks for BlockRemoved; they are not
	// reproducible by a router (vLLM hashes from a random per-process seed)
	// and must never be logged above debug.
	BlockHashes []uint64
	// ParentHash is the hash of the block before BlockHashes[0]; HasParent is
	// false for a chain that starts at the first block.
	ParentHash uint64
	HasParent  bool
	// TokenIDs are the tokens of the stored full blocks, in order.
	TokenIDs []uint32
	// BlockSize is the engine's block size in tokens (0 for offload tiers
	// reusing known hashes).
	BlockSize int
	// LoRAID is vLLM's deprecated integer adapter id; 0 means none.
	LoRAID int64
	// Medium is the storage tier ("GPU", "CPU", ...); empty when nil.
	Medium string
	// LoRAName names the adapter the blocks were computed with; empty for the base model.
	LoRAName string
	// ExtraKeys has one raw msgpack value per block when the engine sent
	// extra keys (multimodal hashes, cache salt); a nil entry means none.
	ExtraKeys [][]byte
	// GroupIdx is the KV-cache group (hybrid models); 0 when absent.
	GroupIdx int
	// SpecKind is kv_cache_spec_kind (e.g. "full_attention"); empty when nil.
	SpecKind string
	// SlidingWindow is kv_cache_spec_sliding_window in tokens; 0 when nil.
	SlidingWindow int
	// Locality, Ownership and SessionID are newer optional vLLM fields.
	Locality, Ownership, SessionID string
	// CacheSalt is SGLang's top-level cache_salt: the salt of the request
	// that stored the blocks. vLLM sends its salt inside ExtraKeys instead;
	// Event.Salt reads both.
	CacheSalt string
	// Bigram reports that token_ids came as SGLang EAGLE bigram pairs;
	// TokenIDs then holds each pair's first element.
	Bigram bool
	// Lookahead is vLLM's lookahead_token_ids: per block, the tokens after
	// it that its hash also covers (EAGLE block-drop hashing); nil when the
	// engine does not hash ahead.
	Lookahead [][]uint32
	// Folded is how many further engine events this BlockRemoved stands
	// for (Batch.FoldRemovals): their hashes follow its own in
	// BlockHashes, in the engine's order. 0 for an event read alone.
	Folded int
}

// EngineEvents is how many of the engine's events ev stands for: 1, or
// more for a folded removal.
func (ev *Event) EngineEvents() int { return 1 + ev.Folded }
