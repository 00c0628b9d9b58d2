package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/warmroute/warmroute/sim"
)

// DefaultBlockSize is the KV block size of event simulators unless told
// otherwise (vLLM's default).
const DefaultBlockSize = 16

// EventSim is a simulator with a real prefix cache publishing KV events on
// ZMQ (a PUB socket and a replay ROUTER on their own loopback ports), made by
// StartEventSim. Restart replaces the Sim's Process and must not run
// concurrently with other uses; the other methods are safe for concurrent use.
type EventSim struct {
	*Sim
	EventsPort, ReplayPort int
	BlockSize              int
	opts                   SimOptions
	bin, logDir            string
}

// EventSimOptions are what StartEventSim adds to a SimOptions.
type EventSimOptions struct {
	SimOptions
	// BlockSize defaults to DefaultBlockSize; NumBlocks to the simulator's.
	BlockSize, NumBlocks int
	// Tokenizer is a tokenizer.json directory; empty keeps the simulator's
	// word tokenizer.
	Tokenizer string
}

// StartEventSim picks free ports for HTTP, events and replay, starts the
// simulator with its KV events on, and waits until it is healthy.
func StartEventSim(ctx context.Context, bin, logDir string, o EventSimOptions) (*EventSim, error) {
	ports, err := FreePorts(3)
	if err != nil {
		return nil, err
	}
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	es := &EventSim{EventsPort: ports[1], ReplayPort: ports[2], BlockSize: o.BlockSize, bin: bin, logDir: logDir}
	so := o.SimOptions
	so.Args = append([]string{"--block-size", strconv.Itoa(o.BlockSize),
		"--kv-events-url", es.EventsURL(), "--kv-replay-url", es.ReplayURL()}, so.Args...)
	if o.NumBlocks > 0 {
		so.Args = append(so.Args, "--num-blocks", strconv.Itoa(o.NumBlocks))
	}
	if o.Tokenizer != "" {
		so.Args = append(so.Args, "--tokenizer", o.Tokenizer)
	}
	es.opts = so
	if es.Sim, err = StartSim(ctx, bin, logDir, ports[0], so); err != nil {
		return nil, err
	}
	return es, nil
}

// EventsURL is the simulator's ZMQ PUB endpoint.
func (s *EventSim) EventsURL() string { return "tcp://" + Addr(s.EventsPort) }

// ReplayURL is the simulator's ZMQ replay endpoint.
func (s *EventSim) ReplayURL() string { return "tcp://" + Addr(s.ReplayPort) }

// Restart stops the simulator process, if it still runs, and starts a new
// one on the same ports: a real engine restart, with an empty cache, a new
// hash seed and sequence numbers from 0.
func (s *EventSim) Restart(ctx context.Context) error {
	_ = s.Stop()
	n, err := StartSim(ctx, s.bin, s.logDir, s.Port, s.opts)
	if err != nil {
		return err
	}
	s.Process = n.Process
	return nil
}

// DebugRestart asks the running simulator to behave as if restarted (POST
// /debug/restart): its cache empties silently and its sequence restarts.
func (s *EventSim) DebugRestart(ctx context.Context) error {
	return s.post(ctx, "/debug/restart")
}

// PauseEvents cuts (true) or restores (false) the simulator's event pipeline;
// batches published while cut are lost on the wire but stay replayable.
func (s *EventSim) PauseEvents(ctx context.Context, paused bool) error {
	return s.post(ctx, "/debug/events?paused="+strconv.FormatBool(paused))
}

func (s *EventSim) post(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.Addr+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("posting %s to %s: %w", path, s.ID, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("posting %s to %s: %s %q", path, s.ID, resp.Status, b)
	}
	return nil
}

// Cache fetches the simulator's true cache.
func (s *EventSim) Cache(ctx context.Context) (sim.CacheState, error) {
	var c sim.CacheState
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.Addr+"/debug/cache", nil)
	if err != nil {
		return c, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return c, fmt.Errorf("reading %s's cache: %w", s.ID, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return c, fmt.Errorf("reading %s's cache: %w", s.ID, err)
	}
	if resp.StatusCode != http.StatusOK {
		return c, fmt.Errorf("reading %s's cache: %s %q", s.ID, resp.Status, body)
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&c); err != nil {
		return c, fmt.Errorf("decoding %s's cache: %w", s.ID, err)
	}
	return c, nil
}
