package harness

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// RelayOptions configures one `warmroute relay` next to an EventSim.
type RelayOptions struct {
	Name string // log name; default "relay-" + the sim's ID
	// Model is the router's pool name: the relay's subjects, and so the key
	// chain's root, are named by it.
	Model string
	NATS  string // NATS URL
	// Heartbeat is the heartbeat interval; default 250ms, so tests see
	// discovery and freshness quickly.
	Heartbeat time.Duration
	// JetStream makes the relay create the event stream routers replay.
	JetStream bool
	Args      []string // further flags
}

// RouterHeartbeatMisses is the events.heartbeatMisses the harness gives
// its routers unless a test sets another: with the relays' 250ms heartbeats
// it makes the silence limit (expiry, and the freshness guard's stale and
// silent rules) 5s, long enough for the injected event delays, as in a
// deployment with the relay's default 2s heartbeats and 3 misses (6s).
const RouterHeartbeatMisses = 20

// Relay is a running relay, made by StartRelay. Restart replaces the
// embedded Process and must not run concurrently with other uses.
type Relay struct {
	Sim       *EventSim
	AdminAddr string // its /metrics
	opts      RelayOptions
	bin       string
	logDir    string
	*Process
}

// DefaultRelayHeartbeat is RelayOptions.Heartbeat's default.
const DefaultRelayHeartbeat = 250 * time.Millisecond

// StartRelay starts a relay for sim (its HTTP address is the endpoint, its
// event and replay sockets the sources), serving metrics on adminPort, and
// waits until it reports its engine socket connected.
func StartRelay(ctx context.Context, bin, logDir string, adminPort int, sim *EventSim, o RelayOptions) (*Relay, error) {
	if o.Name == "" {
		o.Name = "relay-" + sim.ID
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = DefaultRelayHeartbeat
	}
	r := &Relay{Sim: sim, AdminAddr: Addr(adminPort), opts: o, bin: bin, logDir: logDir}
	if err := r.Restart(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Relay) args() []string {
	o := r.opts
	args := []string{"relay", "--endpoint-addr", r.Sim.Addr, "-model", o.Model, "--zmq-url", r.Sim.EventsURL(),
		"--replay-url", r.Sim.ReplayURL(), "--nats-url", o.NATS, "-heartbeat", o.Heartbeat.String(),
		"-block-size", strconv.Itoa(r.Sim.BlockSize), "--admin-addr", r.AdminAddr,
		"--engine-metrics-url", "http://" + r.Sim.Addr + "/metrics"}
	if o.JetStream {
		args = append(args, "--jetstream")
	}
	return append(args, o.Args...)
}

// Restart starts the relay again with the same options (after Stop or a
// crash) and waits until it is connected to its engine.
func (r *Relay) Restart(ctx context.Context) error {
	p, err := Start(r.opts.Name, r.logDir, r.bin, r.args()...)
	if err != nil {
		return err
	}
	r.Process = p
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	if err := r.WaitEngine(ctx); err != nil {
		_ = p.Stop()
		return fmt.Errorf("starting %s: %w\n--- %s ---\n%s", r.opts.Name, err, p.LogPath(), p.Tail(20))
	}
	return nil
}

// RelayEngineConnected is the relay's gauge of its engine socket.
const RelayEngineConnected = "warmroute_events_relay_engine_connected"

// WaitEngine polls the relay's metrics until its engine socket is connected.
func (r *Relay) WaitEngine(ctx context.Context) error {
	return PollMetric(ctx, "http://"+r.AdminAddr+"/metrics", r.Process, func(m Metrics) bool {
		return m.Sum(RelayEngineConnected, nil) == 1
	})
}

// PollMetric scrapes url until ok holds, p (may be nil) exits, or ctx ends.
func PollMetric(ctx context.Context, url string, p *Process, ok func(Metrics) bool) error {
	var exited <-chan struct{}
	if p != nil {
		exited = p.Exited()
	}
	var last error
	for {
		m, err := Scrape(ctx, url)
		if err == nil && ok(m) {
			return nil
		}
		last = err
		select {
		case <-exited:
			return fmt.Errorf("polling %s: %w", url, p.ExitErr())
		case <-ctx.Done():
			return fmt.Errorf("polling %s: %w: %w (last error: %v)", url, ErrNotReady, ctx.Err(), last)
		case <-time.After(pollInterval):
		}
	}
}
