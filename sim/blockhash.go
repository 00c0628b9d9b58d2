package sim

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
)

// digest is a block's full engine hash. Like vLLM, the chain runs over full
// digests and only their last 8 bytes go on the wire, so two blocks whose
// wire hashes collide still have distinct identities inside the engine.
type digest [sha256.Size]byte

// wire is the hash a KV event carries for the block: the digest's last 8
// bytes, big-endian, which is how vLLM turns its digests into integers.
func (d digest) wire() uint64 { return binary.BigEndian.Uint64(d[len(d)-8:]) }

// hashSeed is the root of every chain (vLLM's NONE_HASH). A process without
// --engine-seed draws it at random, which is why a router can never
// recompute engine hashes and must key blocks from their tokens instead.
func hashSeed(seed int64, fixed bool) digest {
	var d digest
	if !fixed {
		rand.Read(d[:])
		return d
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(seed))
	return sha256.Sum256(append([]byte("warmroute-sim-seed\x00"), b[:]...))
}

// blockExtra is what besides the tokens decides a block's identity: the LoRA
// adapter (every block, as vLLM's extra keys do) and the cache salt (first
// block only; chaining carries it into every later block).
type blockExtra struct {
	lora string
	salt string
}

// chainHasher computes block digests. It reuses one buffer, so it is not
// safe for concurrent use; the zero value is ready.
type chainHasher struct{ buf []byte }

// next returns the digest of the block holding tokens (exactly one block)
// whose predecessor has digest parent; first marks the sequence's block 0.
func (h *chainHasher) next(parent digest, tokens []int, extra blockExtra, first bool) digest {
	b := append(h.buf[:0], parent[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(tokens)))
	for _, t := range tokens {
		b = binary.LittleEndian.AppendUint32(b, uint32(t))
	}
	// Length prefixes keep "lora a, salt bc" apart from "lora ab, salt c".
	b = appendKey(b, extra.lora)
	if first {
		b = appendKey(b, extra.salt)
	} else {
		b = appendKey(b, "")
	}
	h.buf = b
	return sha256.Sum256(b)
}

func appendKey(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// chain returns the digests of the first n full blocks of tokens.
func (h *chainHasher) chain(root digest, tokens []int, blockSize, n int, extra blockExtra) []digest {
	out := make([]digest, n)
	parent := root
	for i := range n {
		parent = h.next(parent, tokens[i*blockSize:(i+1)*blockSize], extra, i == 0)
		out[i] = parent
	}
	return out
}
