package wire

import (
	"fmt"
	"slices"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// slowTokens and slowHashes are decodeTokens and decodeHashes without their
// fast loops: every element through readToken/readBigram and readHash.
func slowTokens(r *reader, b *Batch) ([]uint32, bool, error) {
	n, err := r.readArrayLen()
	if err != nil {
		return nil, false, err
	}
	var ids []uint32
	bigram := false
	for i := range n {
		var t uint32
		if r.isArray() {
			t, err = readBigram(r)
			bigram = true
		} else {
			t, err = readToken(r)
		}
		if err != nil {
			return nil, false, fmt.Errorf("token %d: %w", i, err)
		}
		ids = append(ids, t)
	}
	return ids, bigram, nil
}

func slowHashes(r *reader) ([]uint64, error) {
	n, err := r.readArrayLen()
	if err != nil {
		return nil, err
	}
	var hs []uint64
	for i := range n {
		h, err := readHash(r)
		if err != nil {
			return nil, fmt.Errorf("hash %d: %w", i, err)
		}
		hs = append(hs, h)
	}
	return hs, nil
}

// fastSeeds are arrays of every integer encoding (and bigrams, bins,
// negatives, truncations) for the token and hash fuzz targets.
func fastSeeds() [][]byte {
	vals := []any{
		[]uint32{1, 127, 128, 255, 256, 65535, 65536, 151935, 1<<32 - 1},
		[]any{int8(3), int16(300), int32(70000), int64(5), uint64(1 << 40), -1},
		[]any{[]int{5, 6}, 7, []int{8, 9}},
		[]any{uint64(1<<63 | 7), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(200)},
		[]uint64{1<<64 - 1, 0, 1 << 33},
	}
	var out [][]byte
	for _, v := range vals {
		p, err := msgpack.Marshal(v)
		if err != nil {
			panic(err)
		}
		out = append(out, p, p[:len(p)-1], p[:len(p)/2])
	}
	// Hand-made: uint8/uint16/uint32/uint64 forms of small values.
	out = append(out, []byte{0x94, 0xcc, 0x05, 0xcd, 0x00, 0x05, 0xce, 0, 0, 0, 5, 0xcf, 0, 0, 0, 0, 0, 0, 0, 5})
	return out
}

// FuzzFastTokensHashes checks that the fast loops decode any input exactly
// as the element-by-element readers: same values, same error or not, same
// bytes consumed.
func FuzzFastTokensHashes(f *testing.F) {
	for _, p := range fastSeeds() {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		var b Batch
		b.tokens = append(b.tokens, 42) // an arena already in use
		r, rs := &reader{b: p}, &reader{b: p}
		got, gotBi, err := decodeTokens(r, &b)
		want, wantBi, werr := slowTokens(rs, &b)
		if (err != nil) != (werr != nil) {
			t.Fatalf("tokens: fast err %v, slow err %v", err, werr)
		}
		if err == nil && (!slices.Equal(got, want) || gotBi != wantBi || r.off != rs.off) {
			t.Fatalf("tokens: fast %v %v at %d, slow %v %v at %d", got, gotBi, r.off, want, wantBi, rs.off)
		}
		if b.tokens[0] != 42 {
			t.Fatal("tokens: arena prefix overwritten")
		}
		r, rs = &reader{b: p}, &reader{b: p}
		gh, err := decodeHashes(r, &b)
		wh, werr := slowHashes(rs)
		if (err != nil) != (werr != nil) {
			t.Fatalf("hashes: fast err %v, slow err %v", err, werr)
		}
		if err == nil && (!slices.Equal(gh, wh) || r.off != rs.off) {
			t.Fatalf("hashes: fast %v at %d, slow %v at %d", gh, r.off, wh, rs.off)
		}
	})
}

// TestFastTokensHashesSeeds pins the seeds' values, so that the fuzz target
// cannot pass by both paths being wrong the same way.
func TestFastTokensHashesSeeds(t *testing.T) {
	var b Batch
	p, _ := msgpack.Marshal([]uint32{1, 127, 128, 255, 256, 65535, 65536, 151935, 1<<32 - 1})
	got, _, err := decodeTokens(&reader{b: p}, &b)
	if want := []uint32{1, 127, 128, 255, 256, 65535, 65536, 151935, 1<<32 - 1}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("tokens %v %v, want %v", got, err, want)
	}
	p = []byte{0x94, 0xcc, 0x05, 0xcd, 0x00, 0x06, 0xce, 0, 0, 0, 7, 0xcf, 0, 0, 0, 1, 0, 0, 0, 8}
	gh, err := decodeHashes(&reader{b: p}, &b)
	if want := []uint64{5, 6, 7, 1<<32 | 8}; err != nil || !slices.Equal(gh, want) {
		t.Fatalf("hashes %v %v, want %v", gh, err, want)
	}
	p, _ = msgpack.Marshal([]uint64{1<<64 - 1, 1 << 33})
	gh, err = decodeHashes(&reader{b: p}, &b)
	if want := []uint64{1<<64 - 1, 1 << 33}; err != nil || !slices.Equal(gh, want) {
		t.Fatalf("hashes %v %v, want %v", gh, err, want)
	}
}
