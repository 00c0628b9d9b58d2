package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
)

// startEvents binds the KV event sockets named in opts and starts their
// goroutines; without an events endpoint it does nothing.
func (e *Engine) startEvents(opts Options, m *eventMetrics) error {
	if opts.KVEventsEndpoint == "" {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	ep := &eventEndpoints{cancel: cancel}
	out, err := listenPub(ctx, opts.KVEventsEndpoint, opts.KVEventsTopic)
	if err != nil {
		cancel()
		return fmt.Errorf("binding kv events endpoint %s: %w", opts.KVEventsEndpoint, err)
	}
	ep.socks = append(ep.socks, out.sock)
	buf := newReplayBuffer(opts.KVBufferSteps)
	if opts.KVReplayEndpoint != "" {
		rs, err := listenReplay(ctx, opts.KVReplayEndpoint, opts.KVEventsTopic, buf, m)
		if err != nil {
			ep.close()
			return fmt.Errorf("binding kv replay endpoint %s: %w", opts.KVReplayEndpoint, err)
		}
		ep.socks = append(ep.socks, rs.sock)
		ep.goRun(rs.run)
	}
	f := faults{delay: opts.EventDelay, jitter: opts.EventJitter, dropRate: opts.EventDropRate}
	e.pub = newPublisher(out, opts.KVEventsFormat, opts.DPRank, f, buf, m, rand.Uint64())
	ep.goRun(func() { e.pub.run(ctx) })
	e.events = ep
	return nil
}

// PauseEvents cuts (true) or restores (false) event delivery: batches
// published while paused never reach the wire but stay replayable, as
// when the network between engine and subscribers fails.
func (e *Engine) PauseEvents(paused bool) {
	if e.pub != nil {
		e.pub.paused.Store(paused)
	}
}

// ResetPrefixCache empties the cache and publishes AllBlocksCleared, like
// vLLM's POST /reset_prefix_cache. It fails with ErrCacheInUse while
// running requests hold blocks.
func (e *Engine) ResetPrefixCache() error { return e.cache.reset() }

// Restart simulates an engine process restart: the cache is lost without
// any event, event sequence numbers start again at 0 and the replay buffer
// is empty.
func (e *Engine) Restart() { e.cache.restart() }

// CacheState returns the cache's true content.
func (e *Engine) CacheState() CacheState { return e.cache.state() }

// EventsAddr and ReplayAddr are the bound socket addresses (useful with
// port 0), or "" when not bound.
func (e *Engine) EventsAddr() string { return e.sockAddr(0) }

// ReplayAddr is the replay socket's bound address, or "".
func (e *Engine) ReplayAddr() string { return e.sockAddr(1) }

func (e *Engine) sockAddr(i int) string {
	if e.events == nil || len(e.events.socks) <= i {
		return ""
	}
	return "tcp://" + e.events.socks[i].Addr().String()
}
