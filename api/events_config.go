package api

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// EventsConfig says how `warmroute serve` receives KV events and heartbeats.
// With no URL, serve runs an embedded NATS server on Listen that relays
// connect to; with a URL it joins that NATS server or cluster. The zero value
// means every default.
type EventsConfig struct {
	// Disabled turns event ingestion off: no NATS, no discovery, an index
	// that only ever holds predictions.
	Disabled bool `json:"disabled,omitempty"`
	// URL is one or more comma-separated NATS URLs. Empty starts the
	// embedded server.
	URL string `json:"url,omitempty"`
	// CredsFile is a NATS credentials file (JWT and NKey seed).
	CredsFile string `json:"credsFile,omitempty"`
	// NKeySeedFile is a file holding an NKey user seed; exclusive with CredsFile.
	NKeySeedFile string `json:"nkeySeedFile,omitempty"`
	// TLS configures the client connection to an external NATS.
	TLS NATSTLSConfig `json:"tls,omitempty"`
	// Listen is the embedded server's "host:port". Default 127.0.0.1:4222;
	// use a routable address only when relays run on other machines.
	Listen string `json:"listen,omitempty"`
	// JetStream retains event messages so a restarting router can replay them.
	JetStream JetStreamConfig `json:"jetStream,omitempty"`
	// QueueSize bounds messages between the NATS handler and the apply loop.
	// Default 65536.
	QueueSize int `json:"queueSize,omitempty"`
	// HeartbeatMisses is how many relay heartbeat intervals may pass in
	// silence before an endpoint is expired, cleared and removed. Default 3.
	HeartbeatMisses int `json:"heartbeatMisses,omitempty"`
	// Predictions shares speculative predictions with other router replicas.
	Predictions PredictionsConfig `json:"predictions,omitempty"`
}

// NATSTLSConfig names PEM files for TLS to NATS.
type NATSTLSConfig struct {
	// CAFile verifies the server; CertFile and KeyFile (both or neither)
	// authenticate the client.
	CAFile   string `json:"caFile,omitempty"`
	CertFile string `json:"certFile,omitempty"`
	KeyFile  string `json:"keyFile,omitempty"`
}

// JetStreamConfig configures the stream that retains event messages.
type JetStreamConfig struct {
	// Enabled creates (or updates) the stream and replays it at start-up.
	Enabled bool `json:"enabled,omitempty"`
	// Stream is the stream's name. Default "WARMROUTE_KV".
	Stream string `json:"stream,omitempty"`
	// MaxAge bounds how long messages are retained, which bounds both the
	// stream's size and a restarting router's replay time. Default 10m.
	MaxAge Duration `json:"maxAge,omitempty"`
	// StoreDir is where the embedded server keeps the stream. Empty uses a
	// temporary directory removed at shutdown, so replay then only helps
	// routers other than the one hosting the server.
	StoreDir string `json:"storeDir,omitempty"`
}

// Defaults used when an EventsConfig field is zero.
const (
	DefaultEventsListen    = "127.0.0.1:4222"
	DefaultEventsStream    = "WARMROUTE_KV"
	DefaultEventsMaxAge    = 10 * time.Minute
	DefaultEventsQueueSize = 65536
	DefaultHeartbeatMisses = 3
)

// WithDefaults returns a copy of c with every zero field set to its default.
func (c EventsConfig) WithDefaults() EventsConfig {
	if c.Listen == "" {
		c.Listen = DefaultEventsListen
	}
	if c.JetStream.Stream == "" {
		c.JetStream.Stream = DefaultEventsStream
	}
	if c.JetStream.MaxAge == 0 {
		c.JetStream.MaxAge = Duration(DefaultEventsMaxAge)
	}
	if c.QueueSize == 0 {
		c.QueueSize = DefaultEventsQueueSize
	}
	if c.HeartbeatMisses == 0 {
		c.HeartbeatMisses = DefaultHeartbeatMisses
	}
	c.Predictions = c.Predictions.WithDefaults()
	return c
}

// Validate reports every problem in c, joined, or nil.
func (c EventsConfig) Validate() error {
	var errs []error
	if c.CredsFile != "" && c.NKeySeedFile != "" {
		errs = append(errs, errors.New("events: credsFile and nkeySeedFile are exclusive"))
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		errs = append(errs, errors.New("events.tls: certFile and keyFile must be given together"))
	}
	if c.URL == "" && (c.CredsFile != "" || c.NKeySeedFile != "" || c.TLS != NATSTLSConfig{}) {
		errs = append(errs, errors.New("events: credentials and tls apply to an external NATS; set url"))
	}
	if c.Listen != "" {
		if _, _, err := net.SplitHostPort(c.Listen); err != nil {
			errs = append(errs, fmt.Errorf("events.listen %q: want host:port: %w", c.Listen, err))
		}
	}
	if c.QueueSize < 0 || c.HeartbeatMisses < 0 || c.JetStream.MaxAge < 0 {
		errs = append(errs, errors.New("events: queueSize, heartbeatMisses and jetStream.maxAge must not be negative"))
	}
	if strings.ContainsAny(c.JetStream.Stream, ".*> \t\r\n/\\") {
		errs = append(errs, fmt.Errorf("events.jetStream.stream %q: must not contain '.', '*', '>', slashes or whitespace",
			c.JetStream.Stream))
	}
	if err := c.Predictions.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
