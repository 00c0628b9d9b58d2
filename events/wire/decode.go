package wire

import (
	"fmt"
	"unsafe"
)

// DecodeBatch decodes one engine payload (a vLLM or SGLang KV event batch)
// into b, replacing its contents and reusing its memory.
//
// Accepted shapes: the batch as an array [ts, events] or [ts, events, dp_rank]
// (extra trailing elements ignored) or as a map {ts, events,
// data_parallel_rank}; each event as a map tagged by "type" or as a legacy
// array ["Tag", field1, field2, ...] of any length. Unknown map keys are
// ignored; events with an unknown tag are skipped and counted in b.Skipped.
//
// On error b holds the events decoded before the bad one and must not be
// applied. ExtraKeys entries point into payload, which must stay unchanged
// while b is in use.
func DecodeBatch(payload []byte, b *Batch) error {
	b.reset()
	r := reader{b: payload}
	var err error
	switch {
	case r.isArray():
		err = decodeBatchArray(&r, b)
	case r.isMap():
		err = decodeBatchMap(&r, b)
	default:
		err = r.errorf("batch is neither array nor map")
	}
	if err == nil && r.remaining() != 0 {
		err = r.errorf("%d trailing bytes after batch", r.remaining())
	}
	if err != nil {
		return fmt.Errorf("decoding kv event batch: %w", err)
	}
	return nil
}

// Footprint is the memory, in bytes, that b's reusable arenas hold; a caller
// pooling batches drops one grown by an unusually large payload.
func (b *Batch) Footprint() int {
	return cap(b.Events)*int(unsafe.Sizeof(Event{})) + cap(b.hashes)*8 + cap(b.tokens)*4 +
		cap(b.extras)*int(unsafe.Sizeof([]byte(nil)))
}

func decodeBatchArray(r *reader, b *Batch) error {
	n, err := r.readArrayLen()
	if err != nil {
		return err
	}
	if n < 2 {
		return r.errorf("batch array has %d elements, want at least 2", n)
	}
	if b.TS, err = r.readFloat(); err != nil {
		return fmt.Errorf("ts: %w", err)
	}
	if err = decodeEvents(r, b); err != nil {
		return err
	}
	if n >= 3 {
		if err = decodeRank(r, b); err != nil {
			return err
		}
	}
	return skipN(r, n-3)
}

func decodeBatchMap(r *reader, b *Batch) error {
	n, err := r.readMapLen()
	if err != nil {
		return err
	}
	sawEvents := false
	for range n {
		key, err := r.readStr()
		if err != nil {
			return fmt.Errorf("batch key: %w", err)
		}
		switch string(key) {
		case "ts":
			if b.TS, err = r.readFloat(); err != nil {
				err = fmt.Errorf("ts: %w", err)
			}
		case "events":
			sawEvents = true
			err = decodeEvents(r, b)
		case "data_parallel_rank":
			err = decodeRank(r, b)
		default:
			err = r.skip()
		}
		if err != nil {
			return err
		}
	}
	if !sawEvents {
		return r.errorf("batch map has no events key")
	}
	return nil
}

func decodeRank(r *reader, b *Batch) error {
	if r.readNil() {
		return nil
	}
	v, err := r.readInt()
	if err != nil {
		return fmt.Errorf("data_parallel_rank: %w", err)
	}
	if v < 0 || v > 1<<20 {
		return fmt.Errorf("data_parallel_rank %d out of range: %w", v, ErrMalformed)
	}
	b.DPRank, b.HasDPRank = int(v), true
	return nil
}

func skipN(r *reader, n int) error {
	for ; n > 0; n-- {
		if err := r.skip(); err != nil {
			return err
		}
	}
	return nil
}

func decodeEvents(r *reader, b *Batch) error {
	if r.readNil() {
		return nil
	}
	n, err := r.readArrayLen()
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	for i := range n {
		if b.foldable && foldRemoved(r, b) {
			continue
		}
		if err := decodeEvent(r, b); err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
	}
	return nil
}

// decodeEvent appends one event to b, or counts it in b.Skipped when its tag
// is unknown. The arenas are rolled back for a skipped event.
func decodeEvent(r *reader, b *Batch) error {
	mark := b.mark()
	b.Events = append(b.Events, Event{})
	ev := &b.Events[len(b.Events)-1]
	b.foldable = false
	var err error
	switch {
	case r.isMap():
		if decodeRemovedFast(r, b, ev) {
			return nil
		}
		err = decodeEventMap(r, b, ev)
	case r.isArray():
		err = decodeEventArray(r, b, ev)
	default:
		err = r.errorf("event is neither map nor array")
	}
	if err == nil && ev.Kind == KindUnknown {
		b.rollback(mark)
		b.Skipped++
	}
	return err
}

// arenaMark remembers arena lengths so a skipped event can be undone.
type arenaMark struct{ events, hashes, tokens, extras int }

func (b *Batch) mark() arenaMark {
	return arenaMark{len(b.Events), len(b.hashes), len(b.tokens), len(b.extras)}
}

func (b *Batch) rollback(m arenaMark) {
	b.Events = b.Events[:m.events]
	b.hashes = b.hashes[:m.hashes]
	b.tokens = b.tokens[:m.tokens]
	b.extras = b.extras[:m.extras]
}

func kindOf(tag []byte) Kind {
	switch string(tag) {
	case "BlockStored":
		return KindBlockStored
	case "BlockRemoved":
		return KindBlockRemoved
	case "AllBlocksCleared":
		return KindAllBlocksCleared
	}
	return KindUnknown
}

// decodeEventMap reads a tagged map. The tag may come after other fields, so
// known fields are decoded as they come and the event is dropped at the end
// when the tag is unknown.
func decodeEventMap(r *reader, b *Batch, ev *Event) error {
	n, err := r.readMapLen()
	if err != nil {
		return err
	}
	sawType := false
	for range n {
		key, err := r.readStr()
		if err != nil {
			return fmt.Errorf("event key: %w", err)
		}
		if string(key) == "type" {
			tag, err := r.readStr()
			if err != nil {
				return fmt.Errorf("event type: %w", err)
			}
			ev.Kind, sawType = kindOf(tag), true
			continue
		}
		if err := decodeField(r, b, ev, fieldByName(key)); err != nil {
			return err
		}
	}
	if !sawType {
		return r.errorf("event map has no type key")
	}
	return nil
}

// decodeEventArray reads a legacy tagged array ["Tag", fields...]; fields are
// positional in the declaration order of the engine's version, so any length
// is accepted and positions past the known ones are skipped. The legacy
// format (and llm-d-inference-sim, which writes it) marks a chain root with
// parent hash 0 rather than nil, so parent 0 means no parent here.
func decodeEventArray(r *reader, b *Batch, ev *Event) error {
	n, err := r.readArrayLen()
	if err != nil {
		return err
	}
	if n == 0 {
		return r.errorf("event array is empty, want a tag first")
	}
	tag, err := r.readStr()
	if err != nil {
		return fmt.Errorf("event tag: %w", err)
	}
	ev.Kind = kindOf(tag)
	layout := positional[ev.Kind]
	for i := 1; i < n; i++ {
		f := fieldSkip
		if i-1 < len(layout) {
			f = layout[i-1]
		}
		if err := decodeField(r, b, ev, f); err != nil {
			return err
		}
	}
	if ev.HasParent && ev.ParentHash == 0 {
		ev.HasParent = false
	}
	return nil
}
