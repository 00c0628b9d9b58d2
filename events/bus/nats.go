package bus

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// ConnectOptions say how to reach an external NATS server or cluster.
// The zero value connects to nothing; URL is required.
type ConnectOptions struct {
	// URL is one or more comma-separated NATS URLs.
	URL string
	// Name identifies the client in the server's monitoring.
	Name string
	// CredsFile is a NATS credentials file (JWT and NKey seed).
	CredsFile string
	// NKeySeedFile is a file holding an NKey user seed.
	NKeySeedFile string
	// CAFile, CertFile and KeyFile configure TLS; the client pair is optional.
	CAFile, CertFile, KeyFile string
	// Monitor, when set, follows the connection's state (see Monitor.Start).
	Monitor *Monitor
	// RetryRefused keeps reconnecting after the server refused the
	// credentials twice in a row, which otherwise closes the connection for
	// good: a router keeps trying (and stays not ready) until the server's
	// accounts are fixed, while a relay exits so that its supervisor shows it.
	RetryRefused bool
}

// Options turns o into nats.go options. Reconnects never give up, and the
// client-side reconnect buffer is disabled so that publishing while
// disconnected fails fast and the relay's own bounded, counted buffer holds
// the messages instead.
func (o ConnectOptions) Options() ([]nats.Option, error) {
	opts := []nats.Option{nats.Name(o.Name), nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond), nats.ReconnectJitter(100*time.Millisecond, time.Second),
		nats.ReconnectBufSize(-1), nats.RetryOnFailedConnect(true)}
	if o.Monitor != nil {
		opts = append(opts, o.Monitor.Options()...)
	}
	if o.RetryRefused {
		opts = append(opts, nats.IgnoreAuthErrorAbort())
	}
	if o.CredsFile != "" && o.NKeySeedFile != "" {
		return nil, fmt.Errorf("building NATS options: creds file and nkey seed are exclusive: %w", ErrInvalidConfig)
	}
	if o.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(o.CredsFile))
	}
	if o.NKeySeedFile != "" {
		opt, err := nats.NkeyOptionFromSeed(o.NKeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("reading nkey seed: %w", err)
		}
		opts = append(opts, opt)
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return nil, fmt.Errorf("building NATS options: tls cert and key go together: %w", ErrInvalidConfig)
	}
	if o.CAFile != "" {
		opts = append(opts, nats.RootCAs(o.CAFile))
	}
	if o.CertFile != "" {
		opts = append(opts, nats.ClientCert(o.CertFile, o.KeyFile))
	}
	return opts, nil
}

// Connect dials NATS with o. With RetryOnFailedConnect it returns at once
// even when the server is not up yet and keeps trying in the background.
func (o ConnectOptions) Connect() (*nats.Conn, error) {
	if o.URL == "" {
		return nil, fmt.Errorf("connecting to NATS: empty URL: %w", ErrInvalidConfig)
	}
	return o.connect()
}

func (o ConnectOptions) connect(extra ...nats.Option) (*nats.Conn, error) {
	opts, err := o.Options()
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(o.URL, append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("connecting to NATS %s: %w", o.URL, err)
	}
	return nc, nil
}

// EmbeddedServer is a real NATS server running inside this process, for a
// single-machine deployment of `serve`. Close shuts it down and waits.
// It is safe for concurrent use.
type EmbeddedServer struct {
	srv      *server.Server
	internal []nats.Option // how this process authenticates to it
}

// StartEmbedded starts a NATS server listening on host:port (port 0 picks a
// free one; use a loopback host unless relays on other machines must reach
// it) and waits until it accepts clients.
func StartEmbedded(host string, port int) (*EmbeddedServer, error) {
	return StartEmbeddedWith(EmbeddedOptions{Host: host, Port: port})
}

// EmbeddedOptions configures StartEmbeddedWith.
type EmbeddedOptions struct {
	// Host and Port are the client listen address; port 0 picks a free one.
	Host string
	Port int
	// JetStreamDir, when set, enables JetStream with file storage there.
	JetStreamDir string
	// ConfigFile is a nats-server configuration file whose authorization
	// (users, NKeys, token, permissions) and tls blocks the server uses;
	// Host, Port and JetStreamDir still decide where it listens and stores.
	ConfigFile string
	// Insecure allows a listen address other than loopback without
	// authentication; it is logged as a warning by Open.
	Insecure bool
	// Metrics counts the clients the server refuses (nil: not counted);
	// Log gets the server's own log lines (nil: discarded).
	Metrics *Metrics
	Log     *slog.Logger
}

// StartEmbeddedWith starts a NATS server configured by o and waits until it
// accepts clients. It refuses a non-loopback listen address unless clients
// must authenticate (ConfigFile) or o.Insecure says so.
func StartEmbeddedWith(o EmbeddedOptions) (*EmbeddedServer, error) {
	port := o.Port
	if port == 0 {
		port = server.RANDOM_PORT
	} else if err := portFree(o.Host, port); err != nil {
		// The server itself only reports "not ready" when its port is
		// taken; say why.
		return nil, fmt.Errorf("starting embedded NATS: %w", err)
	}
	opts, internal, err := o.serverOptions()
	if err != nil {
		return nil, fmt.Errorf("starting embedded NATS: %w", err)
	}
	opts.Host, opts.Port = o.Host, port
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("starting embedded NATS: %w", err)
	}
	srv.SetLoggerV2(newServerLog(o.Metrics, o.Log), false, false, false)
	go srv.Start() // owned by srv: Shutdown stops it and WaitForShutdown waits
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, errors.New("starting embedded NATS: not ready after 10s")
	}
	return &EmbeddedServer{srv: srv, internal: internal}, nil
}

// ClientURL is the URL relays and routers connect to.
func (e *EmbeddedServer) ClientURL() string { return e.srv.ClientURL() }

// Close stops the server and waits for it to finish.
func (e *EmbeddedServer) Close() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// portFree checks that host:port can be listened on now.
func portFree(host string, port int) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	return ln.Close()
}

func newServerLog(m *Metrics, log *slog.Logger) serverLog {
	if m == nil {
		m, _ = NewMetrics(nil) // nothing to register, so no error
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return serverLog{m: m, log: log}
}
