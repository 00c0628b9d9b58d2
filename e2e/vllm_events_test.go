package e2e

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"

	"github.com/go-zeromq/zmq4"

	"github.com/warmroute/warmroute/events/wire"
)

// vllmBlock is one block an engine announced: its parent's hash (hasParent
// false for a chain's first block) and its tokens.
type vllmBlock struct {
	parent    uint64
	hasParent bool
	tokens    []uint32
}

// vllmEventLog is an engine's KV event stream as a second subscriber (not
// the relay) hears it on the engine's own PUB socket, applied to the set of
// blocks the engine holds: what the engine itself says is in its cache.
type vllmEventLog struct {
	mu      sync.Mutex
	blocks  map[uint64]vllmBlock
	next    uint64 // the sequence number due next
	batches int
	stored  int // BlockStored blocks, removed ones included
	removed int
	cleared int
	mediums map[string]int
	err     error // the first thing that makes the log untrustworthy
	sock    zmq4.Socket
	done    chan struct{}
}

// captureVLLMEvents subscribes to the engine's KV event socket. It must run
// before the engine's first request: the log checks that it heard every
// batch from sequence 0 on.
func captureVLLMEvents(t *testing.T, e *vllmEngine) *vllmEventLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &vllmEventLog{blocks: map[uint64]vllmBlock{}, mediums: map[string]int{}, done: make(chan struct{}),
		sock: zmq4.NewSub(ctx)}
	if err := l.sock.Dial(fmt.Sprintf("tcp://127.0.0.1:%d", e.EventsPort)); err != nil {
		cancel()
		t.Fatalf("subscribing to %s's events: %v", e.Sim.ID, err)
	}
	if err := l.sock.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		cancel()
		t.Fatal(err)
	}
	go l.run()
	t.Cleanup(func() {
		cancel()
		_ = l.sock.Close()
		<-l.done
	})
	return l
}

func (l *vllmEventLog) run() {
	defer close(l.done)
	var b wire.Batch
	for {
		msg, err := l.sock.Recv()
		if err != nil {
			return // closed, or the engine went away (the kill test)
		}
		l.apply(msg.Frames, &b)
	}
}

// apply decodes one [topic, seq, payload] message into the block set.
func (l *vllmEventLog) apply(frames [][]byte, b *wire.Batch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	if len(frames) != 3 || len(frames[1]) != 8 {
		l.err = fmt.Errorf("message with %d frames, want [topic, seq, payload]", len(frames))
		return
	}
	if seq := binary.BigEndian.Uint64(frames[1]); seq != l.next {
		l.err = fmt.Errorf("batch %d after %d: the log missed batches", seq, l.batches)
		return
	}
	l.next++
	l.batches++
	if err := wire.DecodeBatch(frames[2], b); err != nil {
		l.err = err
		return
	}
	for _, ev := range b.Events {
		l.applyEvent(ev)
	}
}

func (l *vllmEventLog) applyEvent(ev wire.Event) {
	switch ev.Kind {
	case wire.KindBlockStored:
		l.mediums[ev.Medium] += len(ev.BlockHashes)
		if len(ev.TokenIDs) != len(ev.BlockHashes)*vllmBlockSize {
			l.err = fmt.Errorf("BlockStored with %d hashes and %d tokens", len(ev.BlockHashes), len(ev.TokenIDs))
			return
		}
		parent, has := ev.ParentHash, ev.HasParent
		for i, h := range ev.BlockHashes {
			tokens := slices.Clone(ev.TokenIDs[i*vllmBlockSize : (i+1)*vllmBlockSize])
			l.blocks[h] = vllmBlock{parent: parent, hasParent: has, tokens: tokens}
			parent, has = h, true
			l.stored++
		}
	case wire.KindBlockRemoved:
		for _, h := range ev.BlockHashes {
			delete(l.blocks, h)
			l.removed++
		}
	case wire.KindAllBlocksCleared:
		clear(l.blocks)
		l.cleared++
	}
}

// vllmChains is an engine's block set as token prefixes: for each block the
// tokens from its chain's first block through it.
type vllmChains map[string][]uint32

// chains returns the log's blocks as token prefixes, or the reason the log
// cannot be trusted (a missed batch, a block whose parent it never heard).
func (l *vllmEventLog) chains() (vllmChains, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return nil, l.err
	}
	out := make(vllmChains, len(l.blocks))
	for h := range l.blocks {
		var rev [][]uint32
		for cur, ok := h, true; ok; {
			b, held := l.blocks[cur]
			if !held {
				return nil, errors.New("a held block's parent is not held: the engine removed a parent before its child")
			}
			rev = append(rev, b.tokens)
			cur, ok = b.parent, b.hasParent
		}
		slices.Reverse(rev)
		tokens := slices.Concat(rev...)
		out[tokenKey(tokens)] = tokens
	}
	return out, nil
}

// summary describes the log for the test's output (counts only).
func (l *vllmEventLog) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("%d batches, %d blocks stored, %d removed, %d clears, %d held, mediums %v",
		l.batches, l.stored, l.removed, l.cleared, len(l.blocks), l.mediums)
}

// leading is how many leading blocks of tokens c holds, as the router's
// index counts a match: whole blocks, stopping at the first one missing.
func (c vllmChains) leading(tokens []uint32) int {
	n := 0
	for n < len(tokens)/vllmBlockSize {
		if _, ok := c[tokenKey(tokens[:(n+1)*vllmBlockSize])]; !ok {
			break
		}
		n++
	}
	return n
}

func tokenKey(tokens []uint32) string {
	b := make([]byte, 4*len(tokens))
	for i, v := range tokens {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return string(b)
}

// indexDivergence compares the router's index with the engines' own block
// sets: every chain any engine holds is looked up, and for each engine the
// confirmed match must be the leading blocks that engine holds of it (all
// of them on the engine that stored it, none or a shared prefix on
// another); each engine's confirmed entry count must equal its block
// count, so the index holds nothing the engine does not. It returns ""
// when they agree, else the first difference (counts only), and the
// number of chains it looked up.
func indexDivergence(ctx context.Context, r *harness.Router, served string, engines []*vllmEngine, held []vllmChains) (string, int) {
	union := vllmChains{}
	for _, c := range held {
		maps.Copy(union, c)
	}
	for _, tokens := range union {
		res, err := r.IndexLookup(ctx, api.IndexLookupRequest{Model: served, Tokens: tokens})
		if err != nil {
			return err.Error(), 0
		}
		for i, e := range engines {
			got, ok := lookupConfirmed(res, e.Sim.Addr)
			if want := held[i].leading(tokens); !ok || got != want {
				return fmt.Sprintf("a %d-block chain: the index holds %d confirmed blocks of it on %s, the engine %d",
					len(tokens)/vllmBlockSize, got, e.Sim.ID, want), 0
			}
		}
	}
	for i, e := range engines {
		n, err := r.IndexEntries(ctx, e.Sim.Addr)
		if err != nil {
			return err.Error(), 0
		}
		if n.Confirmed != len(held[i]) {
			return fmt.Sprintf("%s: the index holds %d confirmed entries, the engine %d blocks", e.Sim.ID, n.Confirmed, len(held[i])), 0
		}
	}
	return "", len(union)
}

func lookupConfirmed(res api.IndexLookupResponse, endpoint string) (int, bool) {
	for _, ep := range res.Endpoints {
		if ep.Endpoint == endpoint {
			return ep.Confirmed, true
		}
	}
	return 0, false
}
