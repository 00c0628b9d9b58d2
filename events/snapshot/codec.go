package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// magic opens every chunk; the digit is the format version.
const magic = "WRS1"

// ErrMalformed reports a chunk that does not follow the format.
var ErrMalformed = errors.New("malformed snapshot chunk")

// MaxTokensPerBlock bounds a block's token count (the index's block size
// limit), so a forged count cannot make the decoder allocate much.
const MaxTokensPerBlock = 1024

// Header describes one chunk of a snapshot. Every chunk repeats the
// snapshot's epoch, sequence and name tables, so each decodes alone.
type Header struct {
	// Epoch is the relay mirror's epoch (api.Heartbeat.Epoch).
	Epoch uint64
	// Seq is the engine sequence of the last batch applied to the mirror;
	// HasSeq is false before the first.
	Seq    uint64
	HasSeq bool
	// Index numbers the chunks from 0; Last marks the final one.
	Index uint32
	Last  bool
	// Total is how many blocks the whole snapshot holds, so a reader can
	// size its tables once.
	Total uint32
	// Media names the storage tiers Block.Media's bits stand for (bit i:
	// Media[i]); at most 8.
	Media []string
	// LoRAs names the adapters Block.LoRA indexes; LoRAs[0] is "" (none).
	LoRAs []string
}

// Block is one engine block of the mirror.
type Block struct {
	// Hash is the engine's block hash; Parent the hash of the block before
	// it when HasParent.
	Hash, Parent uint64
	HasParent    bool
	// Media has bit i set when the engine holds a copy on Header.Media[i].
	// Zero marks a block the engine no longer holds but whose descendants it
	// does: it is sent so those can be chained, and must not be indexed.
	Media uint8
	// LoRA indexes Header.LoRAs.
	LoRA uint16
	// Tokens are the block's token ids.
	Tokens []uint32
	// Extra is the engine's raw msgpack extra keys of the block; nil none.
	Extra []byte
}

// Block flag bits.
const (
	flagParent = 1 << iota
	flagExtra
)

// Chunk flag bits.
const (
	chunkLast = 1 << iota
	chunkHasSeq
)

// fixedHeader is magic, flags, epoch, seq, index, total, block count.
const fixedHeader = 4 + 1 + 8 + 8 + 4 + 4 + 4

// AppendHeader appends h's encoding, announcing n blocks, to dst.
func AppendHeader(dst []byte, h *Header, n int) []byte {
	dst = append(dst, magic...)
	var fl byte
	if h.Last {
		fl |= chunkLast
	}
	if h.HasSeq {
		fl |= chunkHasSeq
	}
	dst = append(dst, fl)
	dst = binary.LittleEndian.AppendUint64(dst, h.Epoch)
	dst = binary.LittleEndian.AppendUint64(dst, h.Seq)
	dst = binary.LittleEndian.AppendUint32(dst, h.Index)
	dst = binary.LittleEndian.AppendUint32(dst, h.Total)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	dst = append(dst, byte(len(h.Media)))
	for _, m := range h.Media {
		dst = append(dst, byte(len(m)))
		dst = append(dst, m[:min(len(m), 255)]...)
	}
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(h.LoRAs)))
	for _, l := range h.LoRAs {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(l)))
		dst = append(dst, l[:min(len(l), math.MaxUint16)]...)
	}
	return dst
}

// BlockSize is the encoded size of b.
func BlockSize(b *Block) int {
	n := 8 + 1 + 1 + 2 + 2 + 4*len(b.Tokens)
	if b.HasParent {
		n += 8
	}
	if b.Extra != nil {
		n += 4 + len(b.Extra)
	}
	return n
}

// AppendBlock appends b's encoding to dst.
func AppendBlock(dst []byte, b *Block) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, b.Hash)
	var fl byte
	if b.HasParent {
		fl |= flagParent
	}
	if b.Extra != nil {
		fl |= flagExtra
	}
	dst = append(dst, fl)
	if b.HasParent {
		dst = binary.LittleEndian.AppendUint64(dst, b.Parent)
	}
	dst = append(dst, b.Media)
	dst = binary.LittleEndian.AppendUint16(dst, b.LoRA)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(b.Tokens)))
	for _, t := range b.Tokens {
		dst = binary.LittleEndian.AppendUint32(dst, t)
	}
	if b.Extra != nil {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b.Extra)))
		dst = append(dst, b.Extra...)
	}
	return dst
}

// Chunk is one decoded chunk. Its blocks' Tokens and Extra share memory
// owned by the Chunk (Extra points into the decoded bytes).
type Chunk struct {
	Header Header
	Blocks []Block
	tokens []uint32
}

// Decode decodes one chunk, replacing c's contents and reusing its memory.
// Blocks' Extra slices point into data. Every field is checked: a short,
// oversized or inconsistent chunk is an error wrapping ErrMalformed, and c
// must then not be used.
func Decode(data []byte, c *Chunk) error {
	d := decoder{b: data}
	if err := d.header(&c.Header); err != nil {
		return fmt.Errorf("decoding snapshot chunk header: %w", err)
	}
	n := d.u32()
	// Every block takes at least 14 bytes, which bounds what n may claim.
	if d.err == nil && uint64(n)*14 > uint64(len(data)) {
		d.fail("%d blocks in %d bytes", n, len(data))
	}
	if err := d.tables(&c.Header); err != nil {
		return fmt.Errorf("decoding snapshot chunk tables: %w", err)
	}
	c.Blocks = c.Blocks[:0]
	if cap(c.Blocks) < int(n) {
		c.Blocks = make([]Block, 0, n)
	}
	// Tokens take what remains at most, so one allocation holds them all.
	if need := d.remaining() / 4; cap(c.tokens) < need {
		c.tokens = make([]uint32, 0, need)
	}
	c.tokens = c.tokens[:0]
	for i := uint32(0); i < n && d.err == nil; i++ {
		c.Blocks = append(c.Blocks, Block{})
		d.block(&c.Blocks[len(c.Blocks)-1], c, len(c.Header.Media), len(c.Header.LoRAs))
	}
	if d.err == nil && d.remaining() != 0 {
		d.fail("%d trailing bytes", d.remaining())
	}
	if d.err != nil {
		return fmt.Errorf("decoding snapshot chunk: %w", d.err)
	}
	return nil
}

// decoder reads the fixed layout, remembering the first error.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("at byte %d: "+format+": %w", append([]any{d.off}, append(args, ErrMalformed)...)...)
	}
}

func (d *decoder) remaining() int { return len(d.b) - d.off }

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || d.remaining() < n {
		d.fail("need %d bytes, have %d", n, d.remaining())
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

func (d *decoder) u8() byte {
	if p := d.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	if p := d.take(2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if p := d.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if p := d.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (d *decoder) header(h *Header) error {
	if string(d.take(4)) != magic {
		d.fail("not a %s snapshot chunk", magic)
		return d.err
	}
	fl := d.u8()
	h.Last, h.HasSeq = fl&chunkLast != 0, fl&chunkHasSeq != 0
	h.Epoch, h.Seq, h.Index, h.Total = d.u64(), d.u64(), d.u32(), d.u32()
	if fl&^(chunkLast|chunkHasSeq) != 0 {
		d.fail("unknown chunk flags %#x", fl)
	}
	return d.err
}

func (d *decoder) tables(h *Header) error {
	nm := int(d.u8())
	if nm > 8 {
		d.fail("%d media, at most 8", nm)
	}
	h.Media = h.Media[:0]
	for i := 0; i < nm && d.err == nil; i++ {
		h.Media = append(h.Media, string(d.take(int(d.u8()))))
	}
	nl := int(d.u16())
	if nl == 0 && d.err == nil {
		d.fail("empty adapter table")
	}
	h.LoRAs = h.LoRAs[:0]
	for i := 0; i < nl && d.err == nil; i++ {
		h.LoRAs = append(h.LoRAs, string(d.take(int(d.u16()))))
	}
	if d.err == nil && h.LoRAs[0] != "" {
		d.fail("adapter 0 is %q, want none", h.LoRAs[0])
	}
	return d.err
}

func (d *decoder) block(b *Block, c *Chunk, media, loras int) {
	b.Hash = d.u64()
	fl := d.u8()
	if fl&^(flagParent|flagExtra) != 0 {
		d.fail("unknown block flags %#x", fl)
	}
	if b.HasParent = fl&flagParent != 0; b.HasParent {
		b.Parent = d.u64()
	}
	b.Media, b.LoRA = d.u8(), d.u16()
	if b.Media>>media != 0 {
		d.fail("media bits %#x beyond %d media", b.Media, media)
	}
	if int(b.LoRA) >= loras {
		d.fail("adapter %d beyond %d", b.LoRA, loras)
	}
	nt := int(d.u16())
	if nt > MaxTokensPerBlock {
		d.fail("%d tokens in a block, at most %d", nt, MaxTokensPerBlock)
	}
	raw := d.take(4 * nt)
	start := len(c.tokens)
	for i := 0; i+4 <= len(raw); i += 4 {
		c.tokens = append(c.tokens, binary.LittleEndian.Uint32(raw[i:]))
	}
	b.Tokens = c.tokens[start:len(c.tokens):len(c.tokens)]
	b.Extra = nil
	if fl&flagExtra != 0 {
		b.Extra = d.take(int(d.u32()))
		if b.Extra == nil && d.err == nil {
			b.Extra = []byte{}
		}
	}
}

// countOffset is where AppendHeader puts the block count.
const countOffset = fixedHeader - 4

// SetBlockCount patches the block count of an encoded chunk whose header was
// appended before its blocks were known.
func SetBlockCount(chunk []byte, n int) {
	binary.LittleEndian.PutUint32(chunk[countOffset:], uint32(n))
}

// MarkLast patches an encoded chunk's header to mark it the last one.
func MarkLast(chunk []byte) { chunk[len(magic)] |= chunkLast }
