package wire

import (
	"encoding/binary"
	"fmt"
	"math"
)

// reader is a cursor over one msgpack document held in memory.
//
// The payload decoders are hand-written on top of it rather than on
// msgpack/v5's Decoder because the engine payload is already a []byte: a
// cursor reads it without the io.Reader indirection, returns strings and bin
// values as sub-slices without copying, and checks every declared length
// against the bytes that remain before allocating, so a hostile length
// prefix cannot make us allocate gigabytes. The msgpack/v5 encoder is used in
// the tests to build payloads independently of this code.
//
// A reader is not safe for concurrent use. The zero value is an empty reader.
type reader struct {
	b   []byte
	off int
}

// msgpack format bytes used below (see the msgpack specification).
const (
	mpNil      = 0xc0
	mpFalse    = 0xc2
	mpTrue     = 0xc3
	mpBin8     = 0xc4
	mpBin16    = 0xc5
	mpBin32    = 0xc6
	mpExt8     = 0xc7
	mpExt16    = 0xc8
	mpExt32    = 0xc9
	mpFloat32  = 0xca
	mpFloat64  = 0xcb
	mpUint8    = 0xcc
	mpUint16   = 0xcd
	mpUint32   = 0xce
	mpUint64   = 0xcf
	mpInt8     = 0xd0
	mpInt16    = 0xd1
	mpInt32    = 0xd2
	mpInt64    = 0xd3
	mpFixExt1  = 0xd4
	mpFixExt2  = 0xd5
	mpFixExt4  = 0xd6
	mpFixExt8  = 0xd7
	mpFixExt16 = 0xd8
	mpStr8     = 0xd9
	mpStr16    = 0xda
	mpStr32    = 0xdb
	mpArray16  = 0xdc
	mpArray32  = 0xdd
	mpMap16    = 0xde
	mpMap32    = 0xdf
)

func (r *reader) remaining() int { return len(r.b) - r.off }

func (r *reader) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s: %w", r.off, fmt.Sprintf(format, args...), ErrMalformed)
}

func (r *reader) peek() (byte, error) {
	if r.off >= len(r.b) {
		return 0, r.errorf("unexpected end of input")
	}
	return r.b[r.off], nil
}

func (r *reader) next(n int) ([]byte, error) {
	if n < 0 || r.remaining() < n {
		return nil, r.errorf("need %d bytes, have %d", n, r.remaining())
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s, nil
}

// uintN reads an n-byte big-endian unsigned integer (n is 1, 2, 4 or 8).
func (r *reader) uintN(n int) (uint64, error) {
	s, err := r.next(n)
	if err != nil {
		return 0, err
	}
	return beUint(s, n), nil
}

// beUint is s's first n bytes (1, 2, 4 or 8) as a big-endian integer.
func beUint(s []byte, n int) uint64 {
	switch n {
	case 1:
		return uint64(s[0])
	case 2:
		return uint64(binary.BigEndian.Uint16(s))
	case 4:
		return uint64(binary.BigEndian.Uint32(s))
	default:
		return binary.BigEndian.Uint64(s)
	}
}

// readNil consumes a nil and reports whether there was one.
func (r *reader) readNil() bool {
	if r.off < len(r.b) && r.b[r.off] == mpNil {
		r.off++
		return true
	}
	return false
}

// readArrayLen reads an array header. Each element takes at least one byte,
// so a length above the remaining input is rejected before any allocation.
// A fixarray (up to 15 elements: a one-hash removal's block_hashes, an event)
// is read inline; every other case, and every error, is readArrayLenSlow's.
func (r *reader) readArrayLen() (int, error) {
	if r.off < len(r.b) {
		if c := r.b[r.off]; c >= 0x90 && c <= 0x9f {
			if n := int(c & 0x0f); n <= len(r.b)-r.off-1 {
				r.off++
				return n, nil
			}
		}
	}
	return r.readArrayLenSlow()
}

func (r *reader) readArrayLenSlow() (int, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	var n uint64
	switch {
	case c >= 0x90 && c <= 0x9f:
		r.off++
		n = uint64(c & 0x0f)
	case c == mpArray16, c == mpArray32:
		r.off++
		if n, err = r.uintN(2 << (c - mpArray16)); err != nil {
			return 0, err
		}
	default:
		return 0, r.errorf("want array, got format 0x%02x", c)
	}
	return r.checkLen(n, 1)
}

// readMapLen reads a map header; each pair takes at least two bytes. A
// fixmap (an event's) is read inline, everything else by readMapLenSlow.
func (r *reader) readMapLen() (int, error) {
	if r.off < len(r.b) {
		if c := r.b[r.off]; c >= 0x80 && c <= 0x8f {
			if n := int(c & 0x0f); 2*n <= len(r.b)-r.off-1 {
				r.off++
				return n, nil
			}
		}
	}
	return r.readMapLenSlow()
}

func (r *reader) readMapLenSlow() (int, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	var n uint64
	switch {
	case c >= 0x80 && c <= 0x8f:
		r.off++
		n = uint64(c & 0x0f)
	case c == mpMap16, c == mpMap32:
		r.off++
		if n, err = r.uintN(2 << (c - mpMap16)); err != nil {
			return 0, err
		}
	default:
		return 0, r.errorf("want map, got format 0x%02x", c)
	}
	return r.checkLen(n, 2)
}

func (r *reader) checkLen(n uint64, minBytesPerItem int) (int, error) {
	if n > uint64(r.remaining()/minBytesPerItem) {
		return 0, r.errorf("length %d exceeds remaining %d bytes", n, r.remaining())
	}
	return int(n), nil
}

// isArray and isMap report the kind of the next value without consuming it.
func (r *reader) isArray() bool {
	c, err := r.peek()
	return err == nil && (c >= 0x90 && c <= 0x9f || c == mpArray16 || c == mpArray32)
}

func (r *reader) isMap() bool {
	c, err := r.peek()
	return err == nil && (c >= 0x80 && c <= 0x8f || c == mpMap16 || c == mpMap32)
}

// readStr returns a string's bytes as a sub-slice of the input (no copy). A
// fixstr (up to 31 bytes: every key, tag and medium an engine writes) is read
// inline, everything else by readStrSlow; FuzzReaderFastPaths checks that
// both read any input alike.
func (r *reader) readStr() ([]byte, error) {
	if s, ok := r.fixStr(); ok {
		return s, nil
	}
	return r.readStrSlow()
}

// fixStr reads a fixstr; ok is false, and nothing is consumed, for any other
// form or a string cut short. Small enough to inline into readStr.
func (r *reader) fixStr() (s []byte, ok bool) {
	off := r.off
	if off < len(r.b) {
		c := r.b[off]
		end := off + 1 + int(c&0x1f)
		if c>>5 == 0xa0>>5 && end <= len(r.b) {
			r.off = end
			return r.b[off+1 : end], true
		}
	}
	return nil, false
}

func (r *reader) readStrSlow() ([]byte, error) {
	c, err := r.peek()
	if err != nil {
		return nil, err
	}
	var n uint64
	switch {
	case c >= 0xa0 && c <= 0xbf:
		r.off++
		n = uint64(c & 0x1f)
	case c >= mpStr8 && c <= mpStr32:
		r.off++
		if n, err = r.uintN(1 << (c - mpStr8)); err != nil {
			return nil, err
		}
	default:
		return nil, r.errorf("want string, got format 0x%02x", c)
	}
	if n > uint64(r.remaining()) {
		return nil, r.errorf("string length %d exceeds remaining %d bytes", n, r.remaining())
	}
	return r.next(int(n))
}

// readBin returns a bin value's bytes as a sub-slice of the input.
func (r *reader) readBin() ([]byte, error) {
	c, err := r.peek()
	if err != nil {
		return nil, err
	}
	if c < mpBin8 || c > mpBin32 {
		return nil, r.errorf("want bin, got format 0x%02x", c)
	}
	r.off++
	n, err := r.uintN(1 << (c - mpBin8))
	if err != nil {
		return nil, err
	}
	if n > uint64(r.remaining()) {
		return nil, r.errorf("bin length %d exceeds remaining %d bytes", n, r.remaining())
	}
	return r.next(int(n))
}

// readInt reads any msgpack integer that fits in an int64.
func (r *reader) readInt() (int64, error) {
	u, neg, err := r.readInteger()
	if err != nil {
		return 0, err
	}
	if !neg && u > math.MaxInt64 {
		return 0, r.errorf("integer %d overflows int64", u)
	}
	return int64(u), nil
}

// readInteger reads any msgpack integer as its 64-bit pattern; neg reports a
// negative value (whose pattern is then the two's complement int64). A
// positive fixint (a group index, a block size) is read inline.
func (r *reader) readInteger() (u uint64, neg bool, err error) {
	if r.off < len(r.b) {
		if c := r.b[r.off]; c <= 0x7f {
			r.off++
			return uint64(c), false, nil
		}
	}
	return r.readIntegerSlow()
}

func (r *reader) readIntegerSlow() (u uint64, neg bool, err error) {
	c, err := r.peek()
	if err != nil {
		return 0, false, err
	}
	switch {
	case c <= 0x7f:
		r.off++
		return uint64(c), false, nil
	case c >= 0xe0:
		r.off++
		return uint64(int64(int8(c))), true, nil
	case c >= mpUint8 && c <= mpUint64:
		r.off++
		u, err = r.uintN(1 << (c - mpUint8))
		return u, false, err
	case c >= mpInt8 && c <= mpInt64:
		r.off++
		return r.signed(1 << (c - mpInt8))
	}
	return 0, false, r.errorf("want integer, got format 0x%02x", c)
}

func (r *reader) signed(n int) (uint64, bool, error) {
	u, err := r.uintN(n)
	if err != nil {
		return 0, false, err
	}
	shift := 64 - 8*n
	v := int64(u<<shift) >> shift // sign-extend
	return uint64(v), v < 0, nil
}

// readFloat reads a float32, float64 or integer as float64 (msgspec writes
// float timestamps, but a hand-made publisher may write an integer).
func (r *reader) readFloat() (float64, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	switch c {
	case mpFloat32:
		r.off++
		u, err := r.uintN(4)
		return float64(math.Float32frombits(uint32(u))), err
	case mpFloat64:
		r.off++
		u, err := r.uintN(8)
		return math.Float64frombits(u), err
	}
	i, err := r.readInt()
	return float64(i), err
}
