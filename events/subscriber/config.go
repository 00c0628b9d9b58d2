package subscriber

import (
	"errors"
	"time"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/predictions"
)

// Config is the `events:` section of serve's configuration: how the router
// reaches NATS (bus.Config, inline), how it follows the streams, and the
// prediction share riding on the same connection. The zero value means
// every default.
type Config struct {
	// Disabled turns event ingestion off: no NATS, no discovery, an index
	// that only ever holds predictions.
	Disabled bool `json:"disabled,omitempty"`
	bus.Config
	// QueueSize bounds messages between the NATS handler and the apply loop.
	// Default DefaultQueueSize. Overflow is counted and shows up as a gap.
	// Not a file setting: the default holds seconds of any relay's rate,
	// and a bigger queue only hides a subscriber that cannot keep up.
	QueueSize int `json:"-"`
	// SyncChunkTimeout bounds the wait for each chunk of a relay's
	// snapshot; a relay silent that long mid-snapshot is retried. Default
	// DefaultSyncChunkTimeout. Not a file setting: a relay answers at once.
	SyncChunkTimeout time.Duration `json:"-"`
	// HeartbeatMisses is how many relay heartbeat intervals a source may
	// stay silent (no batch, no heartbeat) before it is expired, cleared
	// and removed; the TTL controller pauses speculation for it at the same
	// limit. Default DefaultHeartbeatMisses.
	HeartbeatMisses int `json:"heartbeatMisses,omitempty"`
	// HeartbeatMembership, when set, lets a relay's heartbeat add its
	// endpoint to its model's pool (discovery) if the endpoint's IP is in
	// one of these prefixes (AnyEndpoint for every one). Empty, the default,
	// trusts configuration only: heartbeats and batches attach liveness,
	// load and cache state to configured endpoints, and a message for any
	// other endpoint is dropped and counted (result unknown_endpoint). Set
	// it only on a bus where publishing is authenticated and limited.
	HeartbeatMembership []string `json:"heartbeatMembership,omitempty"`
	// Predictions shares speculative predictions with other router replicas.
	Predictions predictions.Config `json:"predictions,omitempty"`
}

// Defaults used when a Config field is zero.
const (
	DefaultQueueSize        = 65536
	DefaultHeartbeatMisses  = 3
	DefaultSyncChunkTimeout = 5 * time.Second
)

// WithDefaults returns a copy of c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	c.Config = c.Config.WithDefaults()
	if c.QueueSize == 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.SyncChunkTimeout <= 0 {
		c.SyncChunkTimeout = DefaultSyncChunkTimeout
	}
	if c.HeartbeatMisses == 0 {
		c.HeartbeatMisses = DefaultHeartbeatMisses
	}
	c.Predictions = c.Predictions.WithDefaults()
	return c
}

// Validate reports every problem in c, joined, or nil.
func (c Config) Validate() error {
	errs := []error{c.Config.Validate()}
	if c.QueueSize < 0 || c.HeartbeatMisses < 0 {
		errs = append(errs, errors.New("events: queueSize and heartbeatMisses must not be negative"))
	}
	errs = append(errs, validateMembership(c.HeartbeatMembership), c.Predictions.Validate())
	return errors.Join(errs...)
}
