// Package snapshot is the wire format and the request/reply exchange of a
// relay mirror's snapshot: the blocks an engine holds (epoch, last
// sequence, blocks), sent by the relay in bounded chunks to the router that
// asked on api.SnapshotSubject.
//
// The format is a fixed little-endian binary layout rather than msgpack:
// a snapshot can hold millions of blocks, and a fixed layout decodes them
// without reflection or per-field tags (see Encoder and Decode).
package snapshot
