package relay

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
)

// Config configures one relay: one engine event stream (one endpoint and
// data-parallel rank) forwarded to NATS. A zero duration or size means the
// default.
type Config struct {
	// EventsEndpoint is the engine's ZMQ PUB endpoint, e.g. "tcp://127.0.0.1:5557".
	EventsEndpoint string
	// ListenEvents makes the relay bind EventsEndpoint and wait for the
	// engine to connect (the engine connects when its endpoint has no '*').
	ListenEvents bool
	// ReplayEndpoint is the engine's replay ROUTER endpoint; empty disables
	// gap filling (every gap then becomes an endpoint reset) and the resync
	// at start-up. With it, a starting relay republishes the engine's
	// buffer from seq 0 so routers regain the blocks cached before the
	// relay started. vLLM keeps only the last buffer_steps batches (default
	// 10000): once the engine has published more, the earliest are gone and
	// the relay publishes a reset instead of the full history.
	ReplayEndpoint string
	// Topic is the ZMQ subscription prefix; empty receives every topic.
	Topic string
	// Model and Endpoint name the stream on NATS; Endpoint is the engine's
	// HTTP "ip:port" as Envoy routes to it.
	Model, Endpoint string
	// DPRank is the engine's data-parallel rank served by this relay.
	DPRank int
	// BlockSize is reported in heartbeats; 0 when unknown.
	BlockSize int
	// MetricsURL is the engine's Prometheus endpoint; when set, heartbeats
	// carry its running/waiting/KV-usage gauges.
	MetricsURL string
	// HealthURL is the engine's health endpoint (vLLM and SGLang: /health);
	// when set, it is probed every heartbeat interval and the engine counts
	// as connected only while it answers 200.
	HealthURL string
	// HeartbeatInterval defaults to 2s.
	HeartbeatInterval time.Duration
	// ReplayTimeout bounds one replay exchange; default 2s. A resync cut
	// short keeps what arrived; the next live batch then finds the rest as
	// a gap and replays it.
	ReplayTimeout time.Duration
	// BufferSize bounds messages held while NATS is unreachable; default 10000.
	BufferSize int
	// BackoffMin and BackoffMax bound reconnect delays; default 100ms and 5s.
	BackoffMin, BackoffMax time.Duration
	// MirrorMaxBlocks bounds the mirror of the engine's blocks that the
	// relay answers snapshot requests from; default DefaultMirrorMaxBlocks,
	// negative disables the mirror (no epoch, no snapshots: routers then
	// fall back to following the live stream only).
	MirrorMaxBlocks int
	// RelayID identifies this relay instance; default random.
	RelayID string
	// Stream, when named, is created or updated at start so that the NATS
	// server retains this relay's messages for replay (see EnsureStream).
	Stream bus.StreamConfig
}

// Defaults for Config.
const (
	DefaultHeartbeatInterval = 2 * time.Second
	DefaultReplayTimeout     = 2 * time.Second
	DefaultBuffer            = 10000
	DefaultBackoffMin        = 100 * time.Millisecond
	DefaultBackoffMax        = 5 * time.Second
)

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	c.HeartbeatInterval = cmp.Or(c.HeartbeatInterval, DefaultHeartbeatInterval)
	c.ReplayTimeout = cmp.Or(c.ReplayTimeout, DefaultReplayTimeout)
	c.BufferSize = cmp.Or(c.BufferSize, DefaultBuffer)
	c.BackoffMin = cmp.Or(c.BackoffMin, DefaultBackoffMin)
	c.BackoffMax = cmp.Or(c.BackoffMax, DefaultBackoffMax)
	c.MirrorMaxBlocks = cmp.Or(c.MirrorMaxBlocks, DefaultMirrorMaxBlocks)
	if c.RelayID == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		c.RelayID = hex.EncodeToString(b[:])
	}
	return c
}

// Validate reports every problem in c, joined, or nil.
func (c Config) Validate() error {
	var errs []string
	if !strings.Contains(c.EventsEndpoint, "://") {
		errs = append(errs, fmt.Sprintf("events endpoint %q: want tcp://host:port or ipc://path", c.EventsEndpoint))
	}
	if c.HealthURL != "" && !strings.HasPrefix(c.HealthURL, "http://") && !strings.HasPrefix(c.HealthURL, "https://") {
		errs = append(errs, fmt.Sprintf("health URL %q: want http(s)://host:port/health", c.HealthURL))
	}
	if c.ReplayEndpoint != "" && !strings.Contains(c.ReplayEndpoint, "://") {
		errs = append(errs, fmt.Sprintf("replay endpoint %q: want tcp://host:port", c.ReplayEndpoint))
	}
	if c.Model == "" {
		errs = append(errs, "model is required")
	}
	if err := api.ValidateEndpoint(c.Endpoint); err != nil {
		errs = append(errs, err.Error())
	}
	if c.DPRank < 0 || c.BlockSize < 0 || c.BufferSize < 0 {
		errs = append(errs, "dp rank, block size and buffer size must not be negative")
	}
	if len(errs) > 0 {
		return fmt.Errorf("validating relay config: %s: %w", strings.Join(errs, "; "), ErrInvalidConfig)
	}
	return nil
}

// Relay forwards one engine's KV event stream to NATS: ZMQ SUB in, sequence
// checking with replay of gaps, explicit resets, a bounded buffer while NATS
// is away, and heartbeats.
//
// Create it with New and call Run once. Its methods are safe for
// concurrent use; the zero value is not usable.
type Relay struct {
	cfg     Config
	nc      *nats.Conn
	log     *slog.Logger
	metrics *Metrics
	subject string
	hbSubj  string
	// rank is the data-parallel rank the relay publishes under: --dp-rank
	// until a batch names the engine's own (the payload is the truth).
	rank     atomic.Int64
	rankText atomic.Pointer[string]
	out      *outbox
	mirror   *mirror // nil when disabled

	lastSeq atomic.Uint64
	haveSeq atomic.Bool
	engine  engineState
	// beatNow asks the heartbeat loop for a heartbeat at once, when what
	// heartbeats say of the engine changed (buffered 1: a pending ask is
	// enough).
	beatNow chan struct{}
	loadMu  sync.Mutex
	load    *api.EngineLoad
}

// New checks cfg and prepares a relay publishing on nc. m comes from
// NewMetrics (nil: unregistered metrics); log may be nil.
func New(cfg Config, nc *nats.Conn, m *Metrics, log *slog.Logger) (*Relay, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if nc == nil {
		return nil, fmt.Errorf("creating relay: nil NATS connection: %w", ErrInvalidConfig)
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if m == nil {
		m, _ = NewMetrics(nil) // nothing to register, so no error
	}
	subj, _ := api.EventSubject(cfg.Model, cfg.Endpoint) // model checked by Validate
	hb, _ := api.HeartbeatSubject(cfg.Model, cfg.Endpoint)
	r := &Relay{cfg: cfg, nc: nc, log: log.With("endpoint", cfg.Endpoint, "dp_rank", cfg.DPRank),
		metrics: m, subject: subj, hbSubj: hb, beatNow: make(chan struct{}, 1)}
	r.setRank(cfg.DPRank)
	r.engine.healthy = cfg.HealthURL == "" // without a probe, sockets alone decide
	r.engine.started = time.Now()
	r.out = newOutbox(cfg.BufferSize, r.metrics)
	if cfg.MirrorMaxBlocks > 0 {
		r.mirror = newMirror(cfg.MirrorMaxBlocks, r.metrics)
	}
	return r, nil
}

// Run relays until ctx is cancelled, then publishes a leaving heartbeat,
// flushes NATS and returns nil. It returns an error only if the NATS
// connection is closed for good.
func (r *Relay) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	snapSub, err := r.serveSnapshots()
	if err != nil {
		return err
	}
	defer unsubscribe(snapSub)
	var wg sync.WaitGroup
	var pubErr error
	wg.Go(func() { r.engineLoop(ctx) })
	wg.Go(func() { r.heartbeatLoop(ctx) })
	if r.cfg.Stream.Name != "" {
		wg.Go(func() { r.ensureStream(ctx) })
	}
	wg.Go(func() {
		if pubErr = r.publishLoop(ctx); pubErr != nil {
			cancel()
		}
	})
	var closedErr error
	wg.Go(func() {
		if closedErr = r.watchClosed(ctx); closedErr != nil {
			cancel()
		}
	})
	wg.Wait()
	if err := cmp.Or(closedErr, pubErr); err != nil {
		return err
	}
	r.sendHeartbeat(true)
	if err := r.nc.FlushTimeout(time.Second); err != nil {
		r.log.Warn("flushing NATS on shutdown", "err", err)
	}
	return nil
}

// batchMsg builds the NATS message for one engine batch. The engine's first
// batch is marked as the start of its stream: routers drop whatever else
// they hold for the Source before applying it.
func (r *Relay) batchMsg(seq uint64, payload []byte) *nats.Msg {
	m := r.headerMsg(api.EventKindBatch, seq)
	if seq == 0 {
		m.Header[api.EventStreamStartHeader] = []string{"true"}
	}
	m.Data = payload
	return m
}

// resetMsg builds an endpoint reset telling routers to clear and resume at seq.
func (r *Relay) resetMsg(reason api.ResetReason, seq uint64) *nats.Msg {
	m := r.headerMsg(api.EventKindReset, seq)
	m.Header[api.EventResetReasonHeader] = []string{string(reason)}
	return m
}

func (r *Relay) headerMsg(kind string, seq uint64) *nats.Msg {
	// Headers are set as map entries, not with Set, to keep the exact names
	// and skip canonicalisation on the hot path.
	h := nats.Header{
		api.EventKindHeader:     {kind},
		api.EventEndpointHeader: {r.cfg.Endpoint},
		api.EventSeqHeader:      {strconv.FormatUint(seq, 10)},
		api.EventDPRankHeader:   {*r.rankText.Load()},
		api.EventRelayHeader:    {r.cfg.RelayID},
	}
	if r.mirror != nil {
		h[api.EventEpochHeader] = []string{strconv.FormatUint(r.mirror.Epoch(), 10)}
	}
	return &nats.Msg{Subject: r.subject, Header: h}
}

// watchClosed returns, with the server's last word, once the NATS
// connection is closed for good (for instance after the server refused the
// credentials twice), or nil when ctx ends first.
func (r *Relay) watchClosed(ctx context.Context) error {
	ch := r.nc.StatusChanged(nats.CLOSED)
	defer r.nc.RemoveStatusListener(ch)
	if !r.nc.IsClosed() {
		select {
		case <-ctx.Done():
			return nil
		case <-ch:
		}
	}
	return r.closedError()
}

// closedError says why the connection closed: an authorization error reads
// as one, not as "connection closed".
func (r *Relay) closedError() error {
	if last := r.nc.LastError(); last != nil {
		return fmt.Errorf("NATS connection closed (%s): %w", bus.ReasonOf(last), last)
	}
	return fmt.Errorf("relaying kv events: %w", nats.ErrConnectionClosed)
}
