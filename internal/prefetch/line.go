package prefetch

import "unsafe"

// LineSize is the cache line size Line's callers plan by: 64 bytes on the
// amd64 and arm64 cores this runs on (a larger line only makes OtherLine
// report a second line that is already on its way).
const LineSize = 64

// OtherLine reports whether b lies in another cache line than a, so that a
// caller about to read both issues Line for b only then: a call saved when
// two neighbouring slots share a line.
func OtherLine(a, b unsafe.Pointer) bool {
	return (uintptr(a)^uintptr(b))&^(LineSize-1) != 0
}
