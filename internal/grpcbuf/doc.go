// Package grpcbuf is the gRPC buffer pool of the warmroute binary: gRPC's
// own pools (mem.DefaultBufferPool and the tiered pools package mem
// exports) clear the whole capacity of every buffer they hand out, so that
// a package reading past what it wrote cannot see another's bytes. For the
// router that is a measurable cost: ext_proc delivers a long prompt's body
// in messages of tens of kilobytes, each gathered into one buffer of the
// 1 MiB tier, which is zeroed for every message (about 5 % of the router's
// CPU at 100k-token prompts). gRPC fills every buffer it gets to the length
// it asked for before reading it (the receive path reads whole frames into
// them; the codec copies whole messages), and keeps a pool that skips the
// clearing for its own transport internally only, so this package provides
// one: power-of-two tiers from 256 bytes to 4 MiB, one sync.Pool each.
//
// Install sets it as gRPC's default pool; the binary calls it once at
// start, before any gRPC server or client exists, as gRPC requires.
package grpcbuf
