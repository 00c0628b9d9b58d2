package harness

import "context"

// StartRelayForPy starts a relay for a PyEngine publishing for endpoint
// (the engine's HTTP address, or another rank's of one endpoint), its PUB and replay sockets the sources (with RelayListens set, the
// relay must listen: pass --zmq-listen in o.Args). It waits until the relay
// reports its engine connected.
func StartRelayForPy(ctx context.Context, bin, logDir string, adminPort int, e *PyEngine, endpoint string, o RelayOptions) (*Relay, error) {
	if o.Name == "" {
		o.Name = "relay-" + e.opts.Name
	}
	// The relay reads only the addresses and block size of an EventSim.
	target := &EventSim{Sim: &Sim{ID: e.opts.Name, Addr: endpoint, Port: e.HealthPort}, EventsPort: e.PubPort,
		ReplayPort: e.ReplayPort, BlockSize: e.BlockSize}
	return StartRelay(ctx, bin, logDir, adminPort, target, o)
}
