package bus

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/warmroute/warmroute/api"
)

// Config says how a router reaches NATS: with no URL it runs an embedded
// server on Listen that relays connect to; with a URL it joins that server
// or cluster. The zero value means every default.
type Config struct {
	// URL is one or more comma-separated NATS URLs. Empty starts the
	// embedded server.
	URL string `json:"url,omitempty"`
	// CredsFile is a NATS credentials file (JWT and NKey seed).
	CredsFile string `json:"credsFile,omitempty"`
	// NKeySeedFile is a file holding an NKey user seed; exclusive with CredsFile.
	NKeySeedFile string `json:"nkeySeedFile,omitempty"`
	// TLS configures the client connection to an external NATS.
	TLS TLSConfig `json:"tls,omitempty"`
	// Listen is the embedded server's "host:port". Default 127.0.0.1:4222;
	// use a routable address only when relays run on other machines.
	Listen string `json:"listen,omitempty"`
	// UnreadyAfter is how long the connection may stay down (unreachable,
	// or refusing the credentials or the TLS handshake) before the router
	// reports not ready. Default DefaultUnreadyAfter.
	UnreadyAfter api.Duration `json:"unreadyAfter,omitempty"`
	// Server secures the embedded server.
	Server ServerConfig `json:"server,omitempty"`
	// JetStream retains event messages so a restarting router can replay them.
	JetStream JetStreamConfig `json:"jetStream,omitempty"`
}

// ServerConfig secures the embedded NATS server.
type ServerConfig struct {
	// Config is a nats-server configuration file: its authorization block
	// (users with passwords or NKeys and their permissions, or a token) and
	// its tls block (certificate, key, and with verify a CA that client
	// certificates must chain to) apply to the embedded server. Listen and
	// the JetStream settings still decide its address and store.
	Config string `json:"config,omitempty"`
	// Insecure allows a non-loopback Listen without authentication, which
	// lets whoever reaches it steer routing. It is logged as a warning.
	Insecure bool `json:"insecure,omitempty"`
}

// TLSConfig names PEM files for TLS to NATS.
type TLSConfig struct {
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
	// Stream is the stream's name. Default DefaultStream, the stream
	// `warmroute relay --jetstream` creates. Not a file setting: subjects are
	// fixed too, so one name per NATS account is all a name could express.
	Stream string `json:"-"`
	// MaxAge bounds how long messages are retained, which bounds both the
	// stream's size and a restarting router's replay time. Default 10m.
	MaxAge api.Duration `json:"maxAge,omitempty"`
	// StoreDir is where the embedded server keeps the stream. Empty uses a
	// temporary directory removed at shutdown, so replay then only helps
	// routers other than the one hosting the server.
	StoreDir string `json:"storeDir,omitempty"`
}

// Defaults used when a Config field is zero.
const (
	DefaultListen = "127.0.0.1:4222"
	DefaultStream = "WARMROUTE_KV"
	DefaultMaxAge = 10 * time.Minute
	// DefaultUnreadyAfter rides out a NATS restart but reports a bus that
	// refuses the router within seconds.
	DefaultUnreadyAfter = 5 * time.Second
)

// WithDefaults returns a copy of c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.JetStream.Stream == "" {
		c.JetStream.Stream = DefaultStream
	}
	if c.JetStream.MaxAge == 0 {
		c.JetStream.MaxAge = api.Duration(DefaultMaxAge)
	}
	if c.UnreadyAfter == 0 {
		c.UnreadyAfter = api.Duration(DefaultUnreadyAfter)
	}
	return c
}

// Validate reports every problem in c, joined, or nil. Messages name the
// settings as serve's configuration file does (events.*).
func (c Config) Validate() error {
	var errs []error
	if c.CredsFile != "" && c.NKeySeedFile != "" {
		errs = append(errs, errors.New("events: credsFile and nkeySeedFile are exclusive"))
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		errs = append(errs, errors.New("events.tls: certFile and keyFile must be given together"))
	}
	if c.URL == "" && (c.CredsFile != "" || c.NKeySeedFile != "" || c.TLS != TLSConfig{}) {
		errs = append(errs, errors.New("events: credentials and tls apply to an external NATS; set url"))
	}
	if c.Listen != "" {
		host, _, err := net.SplitHostPort(c.Listen)
		if err != nil {
			errs = append(errs, fmt.Errorf("events.listen %q: want host:port: %w", c.Listen, err))
		} else if c.URL == "" && !isLoopback(host) && c.Server.Config == "" && !c.Server.Insecure {
			errs = append(errs, fmt.Errorf("events.listen %q: %w", c.Listen, ErrInsecureListen))
		}
	}
	if c.URL != "" && c.Server != (ServerConfig{}) {
		errs = append(errs, errors.New("events.server secures the embedded server; unset it with url"))
	}
	if c.JetStream.MaxAge < 0 || c.UnreadyAfter < 0 {
		errs = append(errs, errors.New("events.jetStream.maxAge and events.unreadyAfter must not be negative"))
	}
	if err := ValidateStreamName(c.JetStream.Stream); err != nil {
		errs = append(errs, fmt.Errorf("events.jetStream.stream: %w", err))
	}
	return errors.Join(errs...)
}

// ValidateStreamName rejects a JetStream stream name that NATS would refuse
// or read as a subject pattern or a path. Empty is valid (the default).
func ValidateStreamName(name string) error {
	if strings.ContainsAny(name, ".*> \t\r\n/\\") {
		return fmt.Errorf("%q must not contain '.', '*', '>', slashes or whitespace", name)
	}
	return nil
}
