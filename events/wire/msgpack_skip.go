package wire

// maxSkipValues bounds how many nested values one skip may walk. Every value
// takes at least one byte, so the input length bounds it anyway; the explicit
// cap documents that skipping is iterative and cannot recurse or loop.
const maxSkipValues = 1 << 30

// skip consumes one complete value of any type, iteratively: a counter of
// values still to consume replaces recursion, so deeply nested hostile input
// cannot exhaust the stack.
func (r *reader) skip() error {
	pending := 1
	for steps := 0; pending > 0; steps++ {
		if steps >= maxSkipValues {
			return ErrTooDeep
		}
		children, err := r.skipHeader()
		if err != nil {
			return err
		}
		pending += children - 1
	}
	return nil
}

// raw consumes one value and returns its encoded bytes (a sub-slice).
func (r *reader) raw() ([]byte, error) {
	start := r.off
	if err := r.skip(); err != nil {
		return nil, err
	}
	return r.b[start:r.off], nil
}

// skipHeader consumes one value's header and scalar body and returns how
// many child values (array elements, map keys and values) follow it.
func (r *reader) skipHeader() (int, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	switch {
	case c <= 0x7f, c >= 0xe0, c == mpNil, c == mpFalse, c == mpTrue:
		r.off++
		return 0, nil
	case c >= 0x80 && c <= 0x8f, c == mpMap16, c == mpMap32:
		n, err := r.readMapLen()
		return 2 * n, err
	case c >= 0x90 && c <= 0x9f, c == mpArray16, c == mpArray32:
		return r.readArrayLen()
	case c >= 0xa0 && c <= 0xbf, c >= mpStr8 && c <= mpStr32:
		_, err := r.readStr()
		return 0, err
	case c >= mpBin8 && c <= mpBin32:
		_, err := r.readBin()
		return 0, err
	}
	return 0, r.skipFixedOrExt(c)
}

// fixedSizes gives the body size of fixed-width formats after the format byte.
var fixedSizes = map[byte]int{
	mpFloat32: 4, mpFloat64: 8,
	mpUint8: 1, mpUint16: 2, mpUint32: 4, mpUint64: 8,
	mpInt8: 1, mpInt16: 2, mpInt32: 4, mpInt64: 8,
	mpFixExt1: 2, mpFixExt2: 3, mpFixExt4: 5, mpFixExt8: 9, mpFixExt16: 17,
}

func (r *reader) skipFixedOrExt(c byte) error {
	if n, ok := fixedSizes[c]; ok {
		r.off++
		_, err := r.next(n)
		return err
	}
	if c >= mpExt8 && c <= mpExt32 {
		r.off++
		n, err := r.uintN(1 << (c - mpExt8))
		if err != nil {
			return err
		}
		if n+1 > uint64(r.remaining()) {
			return r.errorf("ext length %d exceeds remaining %d bytes", n, r.remaining())
		}
		_, err = r.next(int(n) + 1) // type byte + data
		return err
	}
	return r.errorf("unknown msgpack format 0x%02x", c) // only 0xc1 is unused
}
