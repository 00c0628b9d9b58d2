package api

import (
	"errors"
	"fmt"
	"strings"
)

// PredictionsConfig configures sharing speculative predictions between
// router replicas over the events NATS connection. The zero value shares
// nothing.
type PredictionsConfig struct {
	// Share publishes this router's predictions and applies every other
	// replica's. Turn it on for every replica behind the same Envoy.
	Share bool `json:"share,omitempty"`
	// QueueSize bounds predictions waiting to be published, and received
	// ones waiting to be applied; overflow is dropped and counted. Default 4096.
	QueueSize int `json:"queueSize,omitempty"`
	// Stream names the JetStream stream that retains predictions for a
	// restarting replica, used when events.jetStream.enabled is set too.
	// Its age limit is ttl.maxStale. Default "WARMROUTE_PREDICTIONS".
	Stream string `json:"stream,omitempty"`
}

// Defaults used when a PredictionsConfig field is zero.
const (
	DefaultPredictionsQueue  = 4096
	DefaultPredictionsStream = "WARMROUTE_PREDICTIONS"
)

// WithDefaults returns a copy of c with every zero field set to its default.
func (c PredictionsConfig) WithDefaults() PredictionsConfig {
	if c.QueueSize == 0 {
		c.QueueSize = DefaultPredictionsQueue
	}
	if c.Stream == "" {
		c.Stream = DefaultPredictionsStream
	}
	return c
}

// Validate reports every problem in c, joined, or nil.
func (c PredictionsConfig) Validate() error {
	var errs []error
	if c.QueueSize < 0 {
		errs = append(errs, fmt.Errorf("events.predictions.queueSize must not be negative, got %d", c.QueueSize))
	}
	if strings.ContainsAny(c.Stream, ".*> \t\r\n/\\") {
		errs = append(errs, fmt.Errorf("events.predictions.stream %q: must not contain '.', '*', '>', slashes or whitespace", c.Stream))
	}
	return errors.Join(errs...)
}
