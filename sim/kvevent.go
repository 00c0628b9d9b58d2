package sim

import (
	"fmt"
	"strings"
)

// eventKind is one of vLLM's KV event classes.
type eventKind uint8

const (
	blockStored eventKind = iota + 1
	blockRemoved
	allBlocksCleared
)

var eventTags = [...]string{blockStored: "BlockStored", blockRemoved: "BlockRemoved", allBlocksCleared: "AllBlocksCleared"}

// mediumGPU is the only tier the simulator has.
const mediumGPU = "GPU"

// kvEvent is one event of a batch; fields not used by its kind are zero.
type kvEvent struct {
	kind      eventKind
	hashes    []uint64
	parent    uint64
	hasParent bool
	tokens    []int
	blockSize int
	loraID    int // 0: none, sent as nil
	loraName  string
}

// EventFormat selects how events are laid out in a batch.
type EventFormat string

const (
	// FormatMap is vLLM's current layout: each event a map tagged by "type".
	FormatMap EventFormat = "map"
	// FormatArray is the legacy layout: ["BlockStored", field, field, ...].
	FormatArray EventFormat = "array"
)

// Set implements flag.Value.
func (f *EventFormat) Set(v string) error {
	switch EventFormat(strings.ToLower(v)) {
	case FormatMap, "":
		*f = FormatMap
	case FormatArray:
		*f = FormatArray
	default:
		return fmt.Errorf("parsing kv event format %q: %w", v, ErrBadEventFormat)
	}
	return nil
}

func (f *EventFormat) String() string { return string(*f) }

// encodeBatch renders one scheduler step's events as vLLM's msgpack batch
// [ts, events, data_parallel_rank].
func encodeBatch(dst []byte, ts float64, evs []kvEvent, dpRank int, format EventFormat) []byte {
	dst = appendArrayHeader(dst, 3)
	dst = appendFloat64(dst, ts)
	dst = appendArrayHeader(dst, len(evs))
	for i := range evs {
		if format == FormatArray {
			dst = evs[i].appendArray(dst)
		} else {
			dst = evs[i].appendMap(dst)
		}
	}
	return appendInt(dst, dpRank)
}

func (e *kvEvent) appendMap(b []byte) []byte {
	switch e.kind {
	case blockStored:
		b = appendStr(appendMapHeader(b, 8), "type")
		b = appendStr(b, eventTags[e.kind])
		b = e.appendStoredFields(b, true)
	case blockRemoved:
		b = appendStr(appendMapHeader(b, 3), "type")
		b = appendStr(b, eventTags[e.kind])
		b = appendStr(b, "block_hashes")
		b = appendHashes(b, e.hashes)
		b = appendStr(appendStr(b, "medium"), mediumGPU)
	default:
		b = appendStr(appendMapHeader(b, 1), "type")
		b = appendStr(b, eventTags[e.kind])
	}
	return b
}

func (e *kvEvent) appendArray(b []byte) []byte {
	switch e.kind {
	case blockStored:
		b = appendStr(appendArrayHeader(b, 8), eventTags[e.kind])
		b = e.appendStoredFields(b, false)
	case blockRemoved:
		b = appendStr(appendArrayHeader(b, 3), eventTags[e.kind])
		b = appendStr(appendHashes(b, e.hashes), mediumGPU)
	default:
		b = appendStr(appendArrayHeader(b, 1), eventTags[e.kind])
	}
	return b
}

// appendStoredFields writes BlockStored's fields in declaration order,
// each preceded by its name when keyed.
func (e *kvEvent) appendStoredFields(b []byte, keyed bool) []byte {
	key := func(name string) {
		if keyed {
			b = appendStr(b, name)
		}
	}
	key("block_hashes")
	b = appendHashes(b, e.hashes)
	key("parent_block_hash")
	if e.hasParent {
		b = appendUint(b, e.parent)
	} else {
		b = appendNil(b)
	}
	key("token_ids")
	b = appendArrayHeader(b, len(e.tokens))
	for _, t := range e.tokens {
		b = appendInt(b, t)
	}
	key("block_size")
	b = appendInt(b, e.blockSize)
	key("lora_id")
	if e.loraID == 0 {
		b = appendNil(b)
	} else {
		b = appendInt(b, e.loraID)
	}
	key("medium")
	b = appendStr(b, mediumGPU)
	key("lora_name")
	return appendOptStr(b, e.loraName)
}

func appendHashes(b []byte, hs []uint64) []byte {
	b = appendArrayHeader(b, len(hs))
	for _, h := range hs {
		b = appendUint(b, h)
	}
	return b
}
