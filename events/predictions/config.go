package predictions

import (
	"errors"
	"fmt"

	"github.com/warmroute/warmroute/events/bus"
)

// Config is the `events.predictions:` section of serve's configuration:
// sharing speculative predictions between router replicas over the events
// NATS connection. The zero value shares nothing.
type Config struct {
	// Share publishes this router's predictions and applies every other
	// replica's. Turn it on for every replica behind the same Envoy.
	Share bool `json:"share,omitempty"`
	// QueueSize bounds predictions waiting to be published, and received
	// ones waiting to be applied; overflow is dropped and counted.
	// Default DefaultQueueSize. Not a file setting, like the events queue.
	QueueSize int `json:"-"`
	// Stream names the JetStream stream that retains predictions for a
	// restarting replica, used when events.jetStream.enabled is set too.
	// Its age limit is ttl.maxStale. Default DefaultStream. Not a file
	// setting: subjects are fixed too, so one name per NATS account is all
	// a name could express.
	Stream string `json:"-"`
}

// Defaults used when a Config field is zero.
const (
	DefaultQueueSize = 4096
	DefaultStream    = "WARMROUTE_PREDICTIONS"
)

// WithDefaults returns a copy of c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.QueueSize == 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.Stream == "" {
		c.Stream = DefaultStream
	}
	return c
}

// Validate reports every problem in c, joined, or nil.
func (c Config) Validate() error {
	var errs []error
	if c.QueueSize < 0 {
		errs = append(errs, fmt.Errorf("events.predictions.queueSize must not be negative, got %d", c.QueueSize))
	}
	if err := bus.ValidateStreamName(c.Stream); err != nil {
		errs = append(errs, fmt.Errorf("events.predictions.stream: %w", err))
	}
	return errors.Join(errs...)
}
