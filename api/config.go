package api

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
)

// ServeConfig is the schema of `warmroute serve`'s configuration file. YAML and
// flags map onto the same struct; a zero field means "use the default" (see
// Defaults).
type ServeConfig struct {
	// GRPCAddr is the ext_proc gRPC listen address. Default ":9002".
	GRPCAddr string `json:"grpcAddr,omitempty"`
	// AdminAddr is the admin HTTP listen address (/metrics, /healthz, /readyz).
	// Default ":9090".
	AdminAddr string `json:"adminAddr,omitempty"`
	// TLS configures the gRPC listener. Off by default.
	TLS TLSConfig `json:"tls,omitempty"`
	// MaxBodyBytes is the largest request body accepted; larger bodies get 413.
	// Default 8 MiB.
	MaxBodyBytes int64 `json:"maxBodyBytes,omitempty"`
	// Pools maps model names to endpoints.
	Pools []PoolConfig `json:"pools,omitempty"`
	// DefaultPool names the pool used for unknown models (otherwise 404) and for
	// requests without a model (header-only requests, unknown paths). When empty
	// and there is exactly one pool, that pool is the default for requests
	// without a model, but unknown models still get 404.
	DefaultPool string `json:"defaultPool,omitempty"`
	// Fallbacks is how many additional endpoints, in preference order, follow
	// the chosen one in the destination header. Default 0.
	Fallbacks int `json:"fallbacks,omitempty"`
	// DecisionHeader adds x-warmroute-decision to routed requests explaining the
	// choice. Default on; set DisableDecisionHeader to switch it off.
	DisableDecisionHeader bool `json:"disableDecisionHeader,omitempty"`
	// DisableResponseParsing stops reading usage (cached_tokens) from
	// response bodies; the TTL controller then cannot judge predicted hits.
	DisableResponseParsing bool `json:"disableResponseParsing,omitempty"`
	// MaxResponseBytes bounds what one non-streaming response may buffer
	// while its usage is read; beyond it the usage is unknown. Default 1 MiB.
	MaxResponseBytes int64 `json:"maxResponseBytes,omitempty"`
	// ShutdownGrace bounds how long a graceful shutdown waits for open streams.
	// Default 15s.
	ShutdownGrace Duration `json:"shutdownGrace,omitempty"`
	// MaxGRPCMessageBytes raises gRPC's receive limit (default 4 MiB) so large
	// buffered bodies fit. Default MaxBodyBytes + 1 MiB.
	MaxGRPCMessageBytes int `json:"maxGRPCMessageBytes,omitempty"`
	// Index sizes the prefix index (see IndexConfig).
	Index IndexConfig `json:"index,omitempty"`
	// Scoring weighs the scorers for every pool; a pool may override fields.
	Scoring ScoringConfig `json:"scoring,omitempty"`
	// Events configures KV event ingestion over NATS (see EventsConfig;
	// serve validates it as a subscriber.Config).
	Events EventsConfig `json:"events,omitempty"`
	// TTL controls the lifetime of speculative index entries (see TTLConfig).
	// Its grace follows index.grace, the one place it is configured.
	TTL TTLConfig `json:"ttl,omitempty"`
}

// TLSConfig configures TLS on the ext_proc gRPC listener.
type TLSConfig struct {
	// CertFile and KeyFile are PEM files. Both or neither.
	CertFile string `json:"certFile,omitempty"`
	KeyFile  string `json:"keyFile,omitempty"`
	// SelfSigned generates an in-memory self-signed certificate at start-up,
	// for development. Ignored when CertFile is set.
	SelfSigned bool `json:"selfSigned,omitempty"`
}

// Enabled reports whether the listener should serve TLS.
func (t TLSConfig) Enabled() bool { return t.CertFile != "" || t.SelfSigned }

// PoolConfig is one model pool: the model names it serves and its endpoints.
type PoolConfig struct {
	// Name identifies the pool; it is also accepted as a model name.
	Name string `json:"name"`
	// Models lists the model names and aliases routed to this pool.
	Models []string `json:"models,omitempty"`
	// Endpoints lists static endpoints as "ip:port".
	Endpoints []string `json:"endpoints,omitempty"`
	// Tokenizer enables prefix-aware routing for the pool; without it the
	// pool routes on load alone.
	Tokenizer TokenizerConfig `json:"tokenizer,omitempty"`
	// BlockSize is the pool's KV block size; it must equal the index's.
	// Default: the index's.
	BlockSize int `json:"blockSize,omitempty"`
	// LoRAAdapters names the adapters the pool serves. A request whose model
	// names one is keyed under the adapter, as the engine tags its blocks.
	LoRAAdapters []string `json:"loraAdapters,omitempty"`
	// Scoring overrides the global scoring settings that it sets.
	Scoring *ScoringConfig `json:"scoring,omitempty"`
}

// Defaults used when a ServeConfig field is zero.
const (
	DefaultGRPCAddr      = ":9002"
	DefaultAdminAddr     = ":9090"
	DefaultMaxBodyBytes  = 8 << 20
	DefaultShutdownGrace = 15 * time.Second
)

// WithDefaults returns a copy of c with every zero field set to its default.
func (c ServeConfig) WithDefaults() ServeConfig {
	if c.GRPCAddr == "" {
		c.GRPCAddr = DefaultGRPCAddr
	}
	if c.AdminAddr == "" {
		c.AdminAddr = DefaultAdminAddr
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = Duration(DefaultShutdownGrace)
	}
	if c.MaxGRPCMessageBytes == 0 {
		c.MaxGRPCMessageBytes = int(c.MaxBodyBytes) + 1<<20
	}
	c.Index = c.Index.WithDefaults()
	c.TTL.Grace = c.Index.Grace
	c.TTL = c.TTL.WithDefaults()
	return c
}

// Validate reports every problem in c, joined, or nil.
func (c ServeConfig) Validate() error {
	var errs []error
	if c.MaxBodyBytes < 0 {
		errs = append(errs, fmt.Errorf("maxBodyBytes must not be negative, got %d", c.MaxBodyBytes))
	}
	if c.MaxResponseBytes < 0 {
		errs = append(errs, fmt.Errorf("maxResponseBytes must not be negative, got %d", c.MaxResponseBytes))
	}
	if c.Fallbacks < 0 {
		errs = append(errs, fmt.Errorf("fallbacks must not be negative, got %d", c.Fallbacks))
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		errs = append(errs, errors.New("tls: certFile and keyFile must be given together"))
	}
	errs = append(errs, validatePools(c.Pools, c.DefaultPool)...)
	errs = append(errs, validateRouting(c)...)
	if c.TTL.Grace != 0 {
		errs = append(errs, errors.New("ttl.grace is taken from index.grace; set that instead"))
	}
	if err := c.TTL.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func validatePools(pools []PoolConfig, defaultPool string) []error {
	var errs []error
	names := map[string]string{} // model name or alias -> pool
	pool := map[string]bool{}
	for i, p := range pools {
		if p.Name == "" {
			errs = append(errs, fmt.Errorf("pools[%d]: name is required", i))
			continue
		}
		if pool[p.Name] {
			errs = append(errs, fmt.Errorf("pools[%d]: duplicate pool name %q", i, p.Name))
		}
		pool[p.Name] = true
		for _, m := range append([]string{p.Name}, p.Models...) {
			if other, ok := names[m]; ok && other != p.Name {
				errs = append(errs, fmt.Errorf("pools[%d]: model %q is already served by pool %q", i, m, other))
			}
			names[m] = p.Name
		}
		for _, ep := range p.Endpoints {
			if err := ValidateEndpoint(ep); err != nil {
				errs = append(errs, fmt.Errorf("pools[%d] %q: %w", i, p.Name, err))
			}
		}
	}
	if defaultPool != "" && !pool[defaultPool] {
		errs = append(errs, fmt.Errorf("defaultPool %q is not a configured pool", defaultPool))
	}
	return errs
}

// ValidateEndpoint checks that ep is "ip:port" with a literal IP, as Envoy's
// ORIGINAL_DST cluster requires.
func ValidateEndpoint(ep string) error {
	host, port, err := net.SplitHostPort(ep)
	if err != nil {
		return fmt.Errorf("endpoint %q: want ip:port: %w", ep, err)
	}
	if net.ParseIP(host) == nil {
		return fmt.Errorf("endpoint %q: host must be a literal IP address", ep)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("endpoint %q: port must be 1-65535", ep)
	}
	return nil
}
