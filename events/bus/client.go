package bus

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// Client is a router's NATS connection as Config describes it: an embedded
// server (with a JetStream store) when no URL is configured, and the client
// connection, followed by a Monitor. Build it with Open; Close releases
// everything. Its methods are safe for concurrent use; the zero value is
// not usable.
type Client struct {
	embedded *EmbeddedServer
	tempDir  string // JetStream store created for this run, removed by Close
	nc       *nats.Conn
	url      string
	monitor  *Monitor
	close    sync.Once
}

// Open starts the embedded server when cfg has no URL, then connects as
// name. m (nil: unregistered) and log (nil: discarded) follow the
// connection's state.
func Open(cfg Config, name string, m *Metrics, log *slog.Logger) (*Client, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cfg = cfg.WithDefaults()
	c := &Client{url: cfg.URL, monitor: NewMonitor(m, log)}
	connect := ConnectOptions{URL: c.url, Name: name, CredsFile: cfg.CredsFile, NKeySeedFile: cfg.NKeySeedFile,
		CAFile: cfg.TLS.CAFile, CertFile: cfg.TLS.CertFile, KeyFile: cfg.TLS.KeyFile,
		Monitor: c.monitor, RetryRefused: true}
	var extra []nats.Option
	if c.url == "" {
		if err := c.startEmbedded(cfg, log); err != nil {
			c.Close()
			return nil, err
		}
		extra = c.embedded.InProcessOptions()
		c.monitor.inProcess = c.url
	}
	nc, err := connect.connect(extra...)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.nc = nc
	c.monitor.Start(nc)
	return c, nil
}

func (c *Client) startEmbedded(cfg Config, log *slog.Logger) error {
	host, portText, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return fmt.Errorf("starting embedded NATS on %q: %w", cfg.Listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return fmt.Errorf("starting embedded NATS on %q: bad port: %w", cfg.Listen, err)
	}
	opts := EmbeddedOptions{Host: host, Port: port, ConfigFile: cfg.Server.Config, Insecure: cfg.Server.Insecure,
		Metrics: c.monitor.m, Log: log}
	if cfg.JetStream.Enabled {
		if opts.JetStreamDir, err = c.storeDir(cfg.JetStream.StoreDir); err != nil {
			return err
		}
	}
	if c.embedded, err = StartEmbeddedWith(opts); err != nil {
		return err
	}
	c.url = c.embedded.ClientURL()
	if !isLoopback(host) && cfg.Server.Config == "" {
		log.Warn("INSECURE: embedded NATS accepts anyone on a non-loopback address: whoever reaches it can "+
			"publish events and heartbeats that steer routing (events.server.insecure)", "listen", cfg.Listen)
	}
	log.Info("embedded NATS started; point relays at it", "url", c.url, "jetstream", cfg.JetStream.Enabled,
		"config", cfg.Server.Config)
	return nil
}

// storeDir returns dir, or a temporary directory that Close removes.
func (c *Client) storeDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	tmp, err := os.MkdirTemp("", "warmroute-jetstream-")
	if err != nil {
		return "", fmt.Errorf("creating JetStream store: %w", err)
	}
	c.tempDir = tmp
	return tmp, nil
}

// Conn is the connection; it stays open until Close.
func (c *Client) Conn() *nats.Conn { return c.nc }

// URL is the NATS URL in use (the embedded server's when it runs one).
func (c *Client) URL() string { return c.url }

// Down reports how long the connection has been down and why, or a nil
// error while it is up (see Monitor.Down).
func (c *Client) Down() (time.Duration, error) { return c.monitor.Down() }

// Close closes the connection and shuts the embedded server down. Close the
// users of Conn first. It is idempotent.
func (c *Client) Close() {
	c.close.Do(func() {
		c.monitor.Close()
		if c.nc != nil {
			c.nc.Close()
		}
		if c.embedded != nil {
			c.embedded.Close()
		}
		if c.tempDir != "" {
			_ = os.RemoveAll(c.tempDir)
		}
	})
}
