package tokenizer

import "strings"

// byteToRune is GPT-2's reversible byte-to-unicode table: printable bytes
// map to themselves, the others to U+0100 upwards in byte order.
var byteToRune, runeToByte = buildByteTables()

func buildByteTables() ([256]rune, map[rune]byte) {
	var fwd [256]rune
	back := make(map[rune]byte, 256)
	next := rune(256)
	for b := 0; b < 256; b++ {
		printable := (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
		if printable {
			fwd[b] = rune(b)
		} else {
			fwd[b] = next
			next++
		}
		back[fwd[b]] = byte(b)
	}
	return fwd, back
}

// unmapByteLevel turns a byte-level vocabulary string back into the raw
// bytes it stands for; ok is false for strings outside the mapping (such as
// special tokens stored in the vocabulary).
func unmapByteLevel(tok string) (string, bool) {
	var sb strings.Builder
	sb.Grow(len(tok))
	for _, r := range tok {
		b, ok := runeToByte[r]
		if !ok {
			return "", false
		}
		sb.WriteByte(b)
	}
	return sb.String(), true
}
