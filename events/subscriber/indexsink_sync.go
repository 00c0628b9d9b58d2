package subscriber

import (
	"github.com/zeebo/xxh3"

	"github.com/warmroute/warmroute/events/snapshot"
	"github.com/warmroute/warmroute/events/wire"
	"github.com/warmroute/warmroute/index"
)

// Rebuilder starts the index rebuild of src's state from a snapshot; it
// makes IndexSink a Replacer.
func (s *IndexSink) Rebuilder(src Source) SourceRebuild {
	return &indexRebuild{sink: s, src: src, r: s.ix.NewRebuild(src.Model)}
}

// indexRebuild keys snapshot blocks into an index.Rebuild as chunks arrive
// (off the apply loop), then swaps it in.
type indexRebuild struct {
	sink     *IndexSink
	src      Source
	r        *index.Rebuild
	media    [8]uint8 // snapshot medium bit -> index medium bit, for the current chunk
	reserved bool
}

func (b *indexRebuild) AddChunk(c *snapshot.Chunk) {
	if !b.reserved {
		b.reserved = true
		b.r.Reserve(int(min(c.Header.Total, maxReserve)))
	}
	for i, name := range c.Header.Media {
		b.media[i] = 1 << index.ParseMedium(name)
	}
	loras := c.Header.LoRAs
	for i := range c.Blocks {
		blk := &c.Blocks[i]
		var media uint8
		for bit := 0; blk.Media>>bit != 0; bit++ {
			if blk.Media&(1<<bit) != 0 {
				media |= b.media[bit]
			}
		}
		rb := index.RebuildBlock{Hash: blk.Hash, Parent: blk.Parent, HasParent: blk.HasParent,
			Tokens: blk.Tokens, LoRA: loras[blk.LoRA], Media: media}
		if blk.Extra != nil {
			rb.CacheSalt, rb.Extra = snapshotIdentity(blk, rb.LoRA)
		}
		b.r.Add(rb)
	}
}

// snapshotIdentity reads a snapshot block's raw extra keys as a live
// store reads the event's (identityOf, extraOf): the salt of a block that
// starts a chain, and the digest of an identity a request cannot name.
func snapshotIdentity(blk *snapshot.Block, lora string) (salt string, extra uint64) {
	s, opaque := wire.ScanExtraKey(blk.Extra, lora)
	if !blk.HasParent {
		salt = s
	}
	if opaque {
		extra = xxh3.Hash(blk.Extra) | 1
	}
	return salt, extra
}

func (b *indexRebuild) Commit() (int, error) {
	if b.r.Skipped > 0 {
		b.sink.metrics.dropped.WithLabelValues("unkeyed_block").Add(float64(b.r.Skipped))
	}
	if _, err := b.sink.ix.Replace(b.src.Endpoint, b.src.DPRank, b.r); err != nil {
		b.sink.drop(err)
		return 0, err
	}
	return b.r.Held, nil
}

// maxReserve caps what a snapshot's announced size may make a rebuild
// allocate up front (a forged size must not cost much memory).
const maxReserve = 1 << 22
