package router

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/warmroute/warmroute/affinity"
	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/index/ttl"
	"github.com/warmroute/warmroute/scorer"
)

// Routing and Proxy name the embedded package configurations, so that both
// can sit at the top level of the file (encoding/json flattens embedded
// structs) without clashing as two fields called Config.
type (
	// Routing is scorer.Config: pools, defaultPool, fallbacks, scoring.
	Routing = scorer.Config
	// Proxy is extproc.Config: maxBodyBytes, maxBufferedBytes, decisionHeader.
	Proxy = extproc.Config
)

// Config is the configuration file of `warmroute serve`. A zero field means
// its default; WithDefaults fills them.
type Config struct {
	Server
	Proxy
	Routing
	// Index sizes the prefix index.
	Index index.Config `json:"index,omitempty"`
	// Events configures KV event ingestion over NATS.
	Events subscriber.Config `json:"events,omitempty"`
	// TTL controls the lifetime of speculative index entries.
	TTL ttl.Config `json:"ttl,omitempty"`
	// Affinity keeps which endpoint stored each Responses response.
	Affinity affinity.Config `json:"affinity,omitempty"`
}

// Server holds the listeners of `warmroute serve`, the one part of the
// configuration the command itself owns.
type Server struct {
	// GRPCAddr is the ext_proc gRPC listen address. Default ":9002".
	GRPCAddr string `json:"grpcAddr,omitempty"`
	// AdminAddr is the admin HTTP listen address (/metrics, /healthz,
	// /readyz). Default ":9090".
	AdminAddr string `json:"adminAddr,omitempty"`
	// DebugAddr is the debug HTTP listen address (/debug/index/*,
	// /debug/ttl, /debug/pprof), or "off". Default loopback only,
	// DefaultDebugAddr: the index lookup answers whether any prompt is
	// cached, so it must not be reachable by the router's clients.
	DebugAddr string `json:"debugAddr,omitempty"`
	// DebugPprof serves net/http/pprof under /debug/pprof on DebugAddr.
	DebugPprof bool `json:"debugPprof,omitempty"`
	// TLS configures the gRPC listener. Off by default.
	TLS TLSConfig `json:"tls,omitempty"`
	// ShutdownGrace bounds how long a graceful shutdown waits for open
	// streams. Default 15s.
	ShutdownGrace api.Duration `json:"shutdownGrace,omitempty"`
}

// TLSConfig configures TLS on the ext_proc gRPC listener.
type TLSConfig struct {
	// CertFile and KeyFile are PEM files. Both or neither.
	CertFile string `json:"certFile,omitempty"`
	KeyFile  string `json:"keyFile,omitempty"`
	// SelfSigned generates an in-memory self-signed certificate at start-up,
	// for development. Ignored when CertFile is set.
	SelfSigned bool `json:"selfSigned,omitempty"`
	// ClientCAFile is a PEM bundle of CAs. When set, every client (Envoy)
	// must present a certificate that one of them signed: mutual TLS.
	ClientCAFile string `json:"clientCAFile,omitempty"`
}

// Enabled reports whether the listener should serve TLS.
func (t TLSConfig) Enabled() bool { return t.CertFile != "" || t.SelfSigned }

// Defaults of Server.
const (
	DefaultGRPCAddr  = ":9002"
	DefaultAdminAddr = ":9090"
	DefaultDebugAddr = "127.0.0.1:9095"
	// DebugOff as DebugAddr serves no debug endpoints.
	DebugOff             = "off"
	DefaultShutdownGrace = 15 * time.Second
)

// WithDefaults returns a copy of c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.GRPCAddr == "" {
		c.GRPCAddr = DefaultGRPCAddr
	}
	if c.AdminAddr == "" {
		c.AdminAddr = DefaultAdminAddr
	}
	if c.DebugAddr == "" {
		c.DebugAddr = DefaultDebugAddr
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = api.Duration(DefaultShutdownGrace)
	}
	c.Proxy = c.Proxy.WithDefaults()
	c.Scoring = c.Scoring.WithDefaults()
	c.Index = c.Index.WithDefaults()
	c.Events = c.Events.WithDefaults()
	c.TTL = c.TTL.WithDefaults()
	c.Affinity = c.Affinity.WithDefaults()
	return c
}

// Validate reports every problem in c, joined, or nil.
func (c Config) Validate() error {
	var errs []error
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		errs = append(errs, errors.New("tls: certFile and keyFile must be given together"))
	}
	if c.TLS.ClientCAFile != "" && !c.TLS.Enabled() {
		errs = append(errs, errors.New("tls: clientCAFile needs a server certificate (certFile and keyFile, or selfSigned)"))
	}
	if c.DebugAddr != "" && c.DebugAddr != DebugOff {
		if _, _, err := net.SplitHostPort(c.DebugAddr); err != nil {
			errs = append(errs, fmt.Errorf("debugAddr must be host:port or off: %w", err))
		}
	}
	if c.DebugPprof && c.DebugAddr == DebugOff {
		errs = append(errs, errors.New("debugPprof needs a debugAddr, not off"))
	}
	if c.ShutdownGrace < 0 {
		errs = append(errs, fmt.Errorf("shutdownGrace must not be negative, got %s", c.ShutdownGrace.D()))
	}
	if err := c.kubeHeartbeats(); err != nil {
		errs = append(errs, err)
	}
	for _, err := range []error{c.Proxy.Validate(), c.Routing.Validate(), c.Index.Validate(),
		c.Events.Validate(), c.TTL.Validate(), c.Affinity.Validate()} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// kubeHeartbeats refuses heartbeat membership beside a pool that takes its
// members from an InferencePool: a relay heartbeat from an address in one of
// the prefixes would add that address to the pool, past the pool's selector
// and readiness.
func (c Config) kubeHeartbeats() error {
	if c.Events.Disabled || len(c.Events.HeartbeatMembership) == 0 {
		return nil
	}
	for i, p := range c.Pools {
		if p.InferencePool != "" {
			return fmt.Errorf("events.heartbeatMembership %v with pools[%d] %q following inferencePool %q: "+
				"heartbeats would add members past the InferencePool's selector and readiness; "+
				"remove events.heartbeatMembership: the pool's members are the InferencePool's ready Pods",
				c.Events.HeartbeatMembership, i, p.Name, p.InferencePool)
		}
	}
	return nil
}

// TTLOptions returns the TTL controller's options for c: its ttl section
// plus what the controller takes from elsewhere (the index's grace, this
// replica's name). Defaults must have been applied.
func (c Config) TTLOptions(replica string) ttl.Options {
	return ttl.Options{Config: c.TTL, Grace: c.Index.Grace.D(), Replica: replica}
}
