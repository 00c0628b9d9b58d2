//go:build amd64 || arm64

package prefetch

import "unsafe"

// Line starts loading p's cache line into every cache level and returns at
// once; it never faults, whatever p is.
//
//go:noescape
func Line(p unsafe.Pointer)
