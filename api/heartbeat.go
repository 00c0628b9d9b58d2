package api

import (
	"errors"
	"fmt"
	"time"
)

// Heartbeat is the JSON body a relay publishes on HeartbeatSubject at a fixed
// interval. Routers discover endpoints from heartbeats and judge freshness by
// their arrival; an endpoint whose heartbeats stop is expired and cleared.
type Heartbeat struct {
	// Endpoint is the engine's HTTP endpoint, "ip:port", as routed to by Envoy.
	Endpoint string `json:"endpoint"`
	// Model is the model name served by the endpoint.
	Model string `json:"model"`
	// DPRank is the data-parallel rank whose event stream the relay forwards.
	DPRank int `json:"dpRank"`
	// BlockSize is the engine's KV block size in tokens; 0 when unknown.
	BlockSize int `json:"blockSize,omitempty"`
	// Relay identifies the relay instance (changes when the relay restarts).
	Relay string `json:"relay"`
	// Seq is the last engine sequence number forwarded; nil before the first.
	Seq *uint64 `json:"seq,omitempty"`
	// EngineConnected reports whether the relay currently receives from the
	// engine's event socket.
	EngineConnected bool `json:"engineConnected"`
	// EngineUnknown is set while the relay has no evidence either way (it
	// has not reached the engine yet, or it listens and the engine has sent
	// nothing): EngineConnected is then false, but the engine is not known
	// to be down.
	EngineUnknown bool `json:"engineUnknown,omitempty"`
	// Interval is the relay's heartbeat period; routers expire the endpoint
	// after a few missed intervals.
	Interval Duration `json:"interval"`
	// SentAt is the relay's clock when the heartbeat was sent.
	SentAt time.Time `json:"sentAt"`
	// Leaving is set on the last heartbeat of a relay that is shutting down,
	// so routers can clear the endpoint without waiting for expiry.
	Leaving bool `json:"leaving,omitempty"`
	// Epoch names the engine state the relay's mirror follows: it changes
	// whenever the engine's identity may have (relay start, endpoint reset,
	// engine restart). Zero from relays without a mirror (older relays, or
	// the mirror disabled): routers then do not request snapshots.
	Epoch uint64 `json:"epoch,omitempty"`
	// Load holds gauges scraped from the engine's /metrics, when enabled.
	Load *EngineLoad `json:"load,omitempty"`
}

// EngineLoad is the engine's own view of its load.
type EngineLoad struct {
	// Running and Waiting are vllm:num_requests_running and _waiting.
	Running float64 `json:"running"`
	Waiting float64 `json:"waiting"`
	// KVCacheUsage is vllm:kv_cache_usage_perc, a fraction in [0, 1].
	KVCacheUsage float64 `json:"kvCacheUsage"`
	// ScrapedAt is when the relay read the gauges.
	ScrapedAt time.Time `json:"scrapedAt"`
}

// Validate reports every problem in h, joined, or nil.
func (h Heartbeat) Validate() error {
	var errs []error
	if err := ValidateEndpoint(h.Endpoint); err != nil {
		errs = append(errs, err)
	}
	if h.Model == "" {
		errs = append(errs, errors.New("model is required"))
	}
	if h.DPRank < 0 {
		errs = append(errs, fmt.Errorf("dpRank must not be negative, got %d", h.DPRank))
	}
	if h.BlockSize < 0 {
		errs = append(errs, fmt.Errorf("blockSize must not be negative, got %d", h.BlockSize))
	}
	if h.Interval <= 0 {
		errs = append(errs, fmt.Errorf("interval must be positive, got %s", h.Interval.D()))
	}
	return errors.Join(errs...)
}
