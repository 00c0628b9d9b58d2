package snapshot

import (
	"errors"
	"reflect"
	"testing"
)

func TestDecodeRoundTrip(t *testing.T) {
	data := sampleChunk()
	var c Chunk
	if err := Decode(data, &c); err != nil {
		t.Fatal(err)
	}
	h := c.Header
	if h.Epoch != 7 || h.Seq != 42 || !h.HasSeq || !h.Last || !reflect.DeepEqual(h.LoRAs, []string{"", "sql"}) ||
		!reflect.DeepEqual(h.Media, []string{"", "CPU"}) {
		t.Fatalf("header = %+v", h)
	}
	if len(c.Blocks) != 3 {
		t.Fatalf("%d blocks, want 3", len(c.Blocks))
	}
	b := c.Blocks[1]
	if b.Hash != 2 || b.Parent != 1 || !b.HasParent || b.Media != 3 || b.LoRA != 1 ||
		!reflect.DeepEqual(b.Tokens, []uint32{5, 6, 7, 8}) || string(b.Extra) != "\x91\x01" {
		t.Fatalf("block 1 = %+v", b)
	}
	if c.Blocks[2].Media != 0 || c.Blocks[0].HasParent || c.Blocks[0].Extra != nil {
		t.Fatalf("blocks 0 and 2 = %+v %+v", c.Blocks[0], c.Blocks[2])
	}
	if got := encodeChunk(&c); string(got) != string(data) {
		t.Fatal("re-encoding differs")
	}
}

// TestDecodeRejects: each kind of damage is a clear ErrMalformed.
func TestDecodeRejects(t *testing.T) {
	good := sampleChunk()
	mod := func(f func([]byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for name, data := range map[string][]byte{
		"empty":       nil,
		"bad magic":   mod(func(b []byte) []byte { b[0] = 'X'; return b }),
		"truncated":   good[:len(good)-3],
		"trailing":    append(append([]byte(nil), good...), 0),
		"chunk flags": mod(func(b []byte) []byte { b[4] |= 0x80; return b }),
		"huge count":  mod(func(b []byte) []byte { b[fixedHeader-1] = 0x7f; return b }),
		"media bits":  mod(func(b []byte) []byte { b[len(b)-4*4-2-2-1] = 0x80; return b }),
	} {
		var c Chunk
		if err := Decode(data, &c); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Decode = %v, want ErrMalformed", name, err)
		}
	}
}
