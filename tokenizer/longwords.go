package tokenizer

import (
	"errors"
	"fmt"
)

// The cost of byte-pair encoding grows faster than linearly with the length
// of the piece it merges (a pre-tokenizer word, or the part of one that a
// SentencePiece-style model cuts off), and pieces of up to wordCacheMaxLen
// bytes are served from the word cache once seen, so prose costs almost nothing per
// byte while one long "word" (a run of letters with no space or digit)
// costs about half a microsecond per byte at 64 KiB and a full microsecond
// at 1 MiB. The reference tokenizer (and so vLLM) encodes any length; this
// package bounds the bytes an encode may spend in long words instead, and
// fails with ErrLongWords beyond them, so a caller can route such text on
// something other than its tokens. Under the bound the ids are exactly the
// reference's: the bound refuses work, it never changes the result.
const (
	// LongWordBytes is the length from which a piece counts as long. Only
	// pieces the word cache did not answer are counted (a cached piece
	// costs nothing), and real text has few uncached pieces this long.
	LongWordBytes = 64
	// MaxLongWordBytes is the most bytes one Encode accepts in long words:
	// at most about 0.1 s of one core, and far more than real text holds
	// (code, JSON and prose break into words of a few dozen bytes; only
	// runs such as DNA sequences or minified blobs without separators
	// reach it).
	MaxLongWordBytes = 256 << 10
)

// ErrLongWords reports text with more than MaxLongWordBytes in words of at
// least LongWordBytes; nothing was encoded from the offending word on.
var ErrLongWords = errors.New("text has too many bytes in very long words")

// chargeLong adds piece to the encode's long-piece total when it is long,
// failing once the total passes MaxLongWordBytes (before the piece is
// merged).
func (sc *bpeScratch) chargeLong(piece string) error {
	if len(piece) < LongWordBytes {
		return nil
	}
	sc.longBytes += len(piece)
	if sc.longBytes > MaxLongWordBytes {
		return fmt.Errorf("encoding text: %d bytes in words of %d bytes or more, the limit is %d: %w",
			sc.longBytes, LongWordBytes, MaxLongWordBytes, ErrLongWords)
	}
	return nil
}
