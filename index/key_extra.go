package index

import (
	"encoding/binary"

	"github.com/zeebo/xxh3"
)

// AppendChainExtra is AppendChain for blocks whose engine identity includes
// more than tokens: extra[i], when non-zero, is a digest of what the engine
// mixed into block i's hash beyond its tokens (a multimodal input's hash, a
// prompt-embeddings digest). It is folded into that block's key, and through
// chaining into every key after it, as the engine's hash does, so such a
// block never equals the key of a text prompt with the same placeholder
// tokens. A nil or short extra keys the remaining blocks as AppendChain does.
func AppendChainExtra[T Token](dst []Key, parent Key, blockSize int, tokens []T, extra []uint64) ([]Key, error) {
	if len(extra) == 0 {
		return AppendChain(dst, parent, blockSize, tokens)
	}
	if blockSize < 1 || blockSize > maxBlockSize {
		return AppendChain(dst, parent, blockSize, tokens) // reports ErrBlockSize
	}
	n := len(tokens) / blockSize
	dst = growKeys(dst, n)
	for i := range n {
		var err error
		if dst, err = AppendChain(dst, parent, blockSize, tokens[i*blockSize:(i+1)*blockSize]); err != nil {
			return dst, err
		}
		if i < len(extra) && extra[i] != 0 {
			dst[len(dst)-1] = mixExtra(dst[len(dst)-1], extra[i])
		}
		parent = dst[len(dst)-1]
	}
	return dst, nil
}

// mixExtra derives a key from k and an extra-identity digest; the domain
// byte keeps it apart from any chain of token blocks.
func mixExtra(k Key, extra uint64) Key {
	var b [17]byte
	b[0] = 'x'
	binary.LittleEndian.PutUint64(b[1:], uint64(k))
	binary.LittleEndian.PutUint64(b[9:], extra)
	return Key(xxh3.Hash(b[:]))
}
