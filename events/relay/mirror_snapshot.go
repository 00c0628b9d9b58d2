package relay

import (
	"github.com/warmroute/warmroute/events/snapshot"
)

// snapshot encodes the mirror as chunks of at most maxChunk bytes (a block
// larger than that still gets a chunk of its own). Blocks come parents
// first, so a router keys each from its parent's key as it reads them. It
// holds the mirror's lock throughout, so the blocks and the sequence agree:
// the snapshot is the state after batch Seq and before the next.
func (mr *mirror) snapshot(maxChunk int) (chunks [][]byte, blocks int) {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	mr.parity = !mr.parity
	h := snapshot.Header{Epoch: mr.epoch, Seq: mr.seq, HasSeq: mr.hasSeq, Media: mr.media, LoRAs: mr.loras,
		Total: uint32(len(mr.index))}
	w := chunkWriter{max: maxChunk, h: &h}
	w.start()
	var stack []uint32
	for i := range mr.ents {
		// Walk up to the first ancestor already sent (or none), then send
		// the chain from there down.
		stack = stack[:0]
		for at := uint32(i); ; {
			b := &mr.ents[at]
			if b.flags&flagUsed == 0 || mr.emitted(b) {
				break
			}
			stack = append(stack, at)
			if b.flags&flagLinked == 0 {
				break
			}
			at = b.up
		}
		for j := len(stack) - 1; j >= 0; j-- {
			mr.emit(&w, &mr.ents[stack[j]])
		}
	}
	return w.finish(), w.total
}

func (mr *mirror) emitted(b *mblock) bool { return (b.flags&flagEmitted != 0) == mr.parity }

func (mr *mirror) emit(w *chunkWriter, b *mblock) {
	b.flags ^= flagEmitted
	sb := snapshot.Block{Hash: b.hash, Parent: b.parent, HasParent: b.flags&flagHasParent != 0, Media: b.media,
		LoRA: b.lora, Tokens: mr.slabs[b.slab].tokens(b.slot)}
	if b.flags&flagExtra != 0 {
		sb.Extra = mr.extras[b.hash]
		if sb.Extra == nil {
			sb.Extra = []byte{}
		}
	}
	w.add(&sb)
}

// chunkWriter cuts the block stream into chunks, patching each chunk's
// block count and the last one's flag when known.
type chunkWriter struct {
	max    int
	h      *snapshot.Header
	chunks [][]byte
	cur    []byte
	n      int
	total  int
}

func (w *chunkWriter) start() {
	w.h.Index = uint32(len(w.chunks))
	w.cur = snapshot.AppendHeader(make([]byte, 0, w.max), w.h, 0)
	w.n = 0
}

func (w *chunkWriter) add(b *snapshot.Block) {
	if w.n > 0 && len(w.cur)+snapshot.BlockSize(b) > w.max {
		w.end()
		w.start()
	}
	w.cur = snapshot.AppendBlock(w.cur, b)
	w.n++
	w.total++
}

func (w *chunkWriter) end() {
	snapshot.SetBlockCount(w.cur, w.n)
	w.chunks = append(w.chunks, w.cur)
}

func (w *chunkWriter) finish() [][]byte {
	w.end()
	snapshot.MarkLast(w.chunks[len(w.chunks)-1])
	return w.chunks
}
