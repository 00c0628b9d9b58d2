package wire

import (
	"bytes"
	"strconv"
	"testing"
)

// FuzzReaderFastPaths checks that the inline fast paths of readStr,
// readArrayLen, readMapLen and readInteger read any input exactly as the
// general readers do: the same value, an error in the same cases, and the
// same bytes consumed.
func FuzzReaderFastPaths(f *testing.F) {
	for _, seed := range [][]byte{
		{0xa3, 'G', 'P', 'U'}, {0xa3, 'G', 'P'}, {0xbf}, {0xd9, 2, 'a', 'b'},
		{0x91, 0xcf, 1, 2, 3, 4, 5, 6, 7, 8}, {0x9f}, {0x93, 1, 2}, {0xdc, 0, 1, 7},
		{0x84, 1, 2, 3, 4, 5, 6, 7, 8}, {0x84, 1, 2}, {0x8f}, {0xde, 0, 1, 1, 2},
		{0x00}, {0x7f}, {0xe0}, {0xcc, 200}, {0xd3, 0xff}, {},
	} {
		for off := range 2 {
			f.Add(seed, off)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, off int) {
		if off < 0 || off > len(b) {
			return
		}
		type result struct {
			v   string
			err bool
			off int
		}
		run := func(read func(r *reader) (string, error)) result {
			r := &reader{b: b, off: off}
			v, err := read(r)
			if err != nil {
				v = ""
			}
			return result{v, err != nil, r.off}
		}
		same := func(name string, fast, slow func(r *reader) (string, error)) {
			if f, s := run(fast), run(slow); f != s {
				t.Errorf("%s at %d of %x: fast %+v, general %+v", name, off, b, f, s)
			}
		}
		str := func(read func(*reader) ([]byte, error)) func(r *reader) (string, error) {
			return func(r *reader) (string, error) {
				s, err := read(r)
				if err == nil && !bytes.Equal(s, b[r.off-len(s):r.off]) {
					t.Errorf("string not a sub-slice ending at the cursor")
				}
				return string(s), err
			}
		}
		count := func(read func(*reader) (int, error)) func(r *reader) (string, error) {
			return func(r *reader) (string, error) {
				n, err := read(r)
				return strconv.Itoa(n), err
			}
		}
		integer := func(read func(*reader) (uint64, bool, error)) func(r *reader) (string, error) {
			return func(r *reader) (string, error) {
				u, neg, err := read(r)
				return strconv.FormatUint(u, 10) + strconv.FormatBool(neg), err
			}
		}
		same("readStr", str((*reader).readStr), str((*reader).readStrSlow))
		same("readArrayLen", count((*reader).readArrayLen), count((*reader).readArrayLenSlow))
		same("readMapLen", count((*reader).readMapLen), count((*reader).readMapLenSlow))
		same("readInteger", integer((*reader).readInteger), integer((*reader).readIntegerSlow))
	})
}
