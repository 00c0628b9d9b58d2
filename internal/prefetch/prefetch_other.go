//go:build !amd64 && !arm64

package prefetch

import (
	"runtime"
	"unsafe"
)

// Line loads a byte of p (kept from being optimized away), which starts its
// cache miss as far as the reorder window allows: there is no assembly for
// this architecture. Unlike the assembly, p must be valid.
func Line(p unsafe.Pointer) { runtime.KeepAlive(*(*byte)(p)) }
