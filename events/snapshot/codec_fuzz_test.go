package snapshot

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecode: any input decodes or fails with ErrMalformed, never panics,
// and what decodes re-encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add(sampleChunk())
	f.Add([]byte(magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Chunk
		if err := Decode(data, &c); err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if got := encodeChunk(&c); !bytes.Equal(got, data) {
			t.Fatalf("re-encoded %x, decoded from %x", got, data)
		}
	})
}

func encodeChunk(c *Chunk) []byte {
	out := AppendHeader(nil, &c.Header, len(c.Blocks))
	for i := range c.Blocks {
		out = AppendBlock(out, &c.Blocks[i])
	}
	return out
}

func sampleChunk() []byte {
	c := Chunk{Header: Header{Epoch: 7, Seq: 42, HasSeq: true, Index: 0, Last: true,
		Media: []string{"", "CPU"}, LoRAs: []string{"", "sql"}},
		Blocks: []Block{
			{Hash: 1, Media: 1, Tokens: []uint32{1, 2, 3, 4}},
			{Hash: 2, Parent: 1, HasParent: true, Media: 3, LoRA: 1, Tokens: []uint32{5, 6, 7, 8}, Extra: []byte{0x91, 0x01}},
			{Hash: 3, Parent: 2, HasParent: true, Tokens: []uint32{9, 10, 11, 12}},
		}}
	return encodeChunk(&c)
}
