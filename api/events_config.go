package api

// EventsConfig is the `events:` section of serve's configuration file as
// the file schema declares it. Its owner is package events/subscriber
// (subscriber.Config, which inlines bus.Config and nests predictions.Config):
// defaults, validation and meaning live there, and serve reads this section
// into that type by JSON name. The section is declared here only because
// ServeConfig is, and api cannot import the events packages, which import
// its wire types. The zero value means every default.
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
	// Listen is the embedded server's "host:port"; empty: the default.
	Listen string `json:"listen,omitempty"`
	// JetStream retains event messages so a restarting router can replay them.
	JetStream JetStreamConfig `json:"jetStream,omitempty"`
	// QueueSize bounds messages between the NATS handler and the apply loop.
	QueueSize int `json:"queueSize,omitempty"`
	// HeartbeatMisses is how many relay heartbeat intervals an endpoint may
	// stay silent before it is expired (and speculation on it paused).
	HeartbeatMisses int `json:"heartbeatMisses,omitempty"`
	// Predictions shares speculative predictions with other router replicas.
	Predictions PredictionsConfig `json:"predictions,omitempty"`
}

// NATSTLSConfig names PEM files for TLS to NATS (bus.TLSConfig).
type NATSTLSConfig struct {
	// CAFile verifies the server; CertFile and KeyFile (both or neither)
	// authenticate the client.
	CAFile   string `json:"caFile,omitempty"`
	CertFile string `json:"certFile,omitempty"`
	KeyFile  string `json:"keyFile,omitempty"`
}

// JetStreamConfig configures the stream that retains event messages
// (bus.JetStreamConfig).
type JetStreamConfig struct {
	// Enabled creates (or updates) the stream and replays it at start-up.
	Enabled bool `json:"enabled,omitempty"`
	// Stream is the stream's name.
	Stream string `json:"stream,omitempty"`
	// MaxAge bounds how long messages are retained.
	MaxAge Duration `json:"maxAge,omitempty"`
	// StoreDir is where the embedded server keeps the stream. Empty uses a
	// temporary directory removed at shutdown, so replay then only helps
	// routers other than the one hosting the server.
	StoreDir string `json:"storeDir,omitempty"`
}

// PredictionsConfig is the `events.predictions:` section of the file schema
// (predictions.Config owns it). The zero value shares nothing.
type PredictionsConfig struct {
	// Share publishes this router's predictions and applies every other
	// replica's. Turn it on for every replica behind the same Envoy.
	Share bool `json:"share,omitempty"`
	// QueueSize bounds predictions waiting to be published, and received
	// ones waiting to be applied; overflow is dropped and counted.
	QueueSize int `json:"queueSize,omitempty"`
	// Stream names the JetStream stream that retains predictions for a
	// restarting replica, used when events.jetStream.enabled is set too.
	// Its age limit is ttl.maxStale.
	Stream string `json:"stream,omitempty"`
}
