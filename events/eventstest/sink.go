// Package eventstest provides in-memory doubles for the events packages'
// consumer interfaces (a Sink and a Membership for package subscriber) and
// the NATS helpers their tests share: an embedded server per test, a
// background runner, a relay-shaped publisher and metric readers.
package eventstest

import (
	"maps"
	"slices"
	"sync"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/events/wire"
)

// Sink is an subscriber.Sink that keeps the set of engine block hashes each
// source holds, the way an index's confirmed half would, plus counts of
// calls. It is safe for concurrent use; the zero value is ready.
type Sink struct {
	mu      sync.Mutex
	blocks  map[subscriber.Source]map[uint64]struct{}
	Batches int // ApplyBatch calls
	Clears  int // ClearSource calls
}

var _ subscriber.Sink = (*Sink)(nil)

// ApplyBatch applies stored, removed and cleared events to src's set.
func (s *Sink) ApplyBatch(src subscriber.Source, b *wire.Batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Batches++
	set := s.set(src)
	for _, ev := range b.Events {
		switch ev.Kind {
		case wire.KindBlockStored:
			for _, h := range ev.BlockHashes {
				set[h] = struct{}{}
			}
		case wire.KindBlockRemoved:
			for _, h := range ev.BlockHashes {
				delete(set, h)
			}
		case wire.KindAllBlocksCleared:
			clear(set)
		}
	}
}

// ClearSource forgets src's blocks.
func (s *Sink) ClearSource(src subscriber.Source) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Clears++
	delete(s.blocks, src)
}

// Blocks returns src's block hashes in ascending order.
func (s *Sink) Blocks(src subscriber.Source) []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.blocks[src]))
}

// Counts returns the ApplyBatch and ClearSource call counts.
func (s *Sink) Counts() (batches, clears int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Batches, s.Clears
}

func (s *Sink) set(src subscriber.Source) map[uint64]struct{} {
	if s.blocks == nil {
		s.blocks = map[subscriber.Source]map[uint64]struct{}{}
	}
	set, ok := s.blocks[src]
	if !ok {
		set = map[uint64]struct{}{}
		s.blocks[src] = set
	}
	return set
}

// Membership records SourceUp and SourceDown calls. It is safe for
// concurrent use; the zero value is ready.
type Membership struct {
	mu  sync.Mutex
	up  map[subscriber.Source]bool
	Log []string // "up <endpoint>" / "down <endpoint> <reason>"
}

var _ subscriber.Membership = (*Membership)(nil)

// SourceUp marks src as present.
func (m *Membership) SourceUp(src subscriber.Source, _ api.Heartbeat) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.up == nil {
		m.up = map[subscriber.Source]bool{}
	}
	m.up[src] = true
	m.Log = append(m.Log, "up "+src.Endpoint)
}

// SourceDown marks src as gone.
func (m *Membership) SourceDown(src subscriber.Source, reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.up, src)
	m.Log = append(m.Log, "down "+src.Endpoint+" "+reason)
}

// Up reports whether src is currently present.
func (m *Membership) Up(src subscriber.Source) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.up[src]
}

// Events returns a copy of the call log.
func (m *Membership) Events() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.Log)
}
