package extproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"

	filterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc/status"

	"github.com/warmroute/warmroute/scorer"
)

// Picker chooses the endpoint for a parsed request. *scorer.Scorer implements
// it. The returned Decision is committed by the Server once Envoy has been told
// the destination and released when the request ends.
type Picker interface {
	Pick(ctx context.Context, req *scorer.Request) (*scorer.Decision, error)
}

var _ Picker = (*scorer.Scorer)(nil)

// BodyMode is the request and response body mode assumed when Envoy does not
// announce its own: recent Envoys send protocol_config on a stream's first
// message, older ones do not.
type BodyMode int

// Body modes. The zero value is BodyModeBuffered.
const (
	BodyModeBuffered BodyMode = iota
	BodyModeFullDuplexStreamed
	BodyModeNone
)

var bodyModeNames = map[BodyMode]string{
	BodyModeBuffered:           "buffered",
	BodyModeFullDuplexStreamed: "full_duplex_streamed",
	BodyModeNone:               "none",
}

func (m BodyMode) String() string {
	if s, ok := bodyModeNames[m]; ok {
		return s
	}
	return fmt.Sprintf("BodyMode(%d)", int(m))
}

// ParseBodyMode reads a body mode name as written by BodyMode.String.
func ParseBodyMode(s string) (BodyMode, error) {
	for m, name := range bodyModeNames {
		if name == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("parsing body mode %q: want buffered, full_duplex_streamed or none", s)
}

func (m BodyMode) envoy() filterv3.ProcessingMode_BodySendMode {
	switch m {
	case BodyModeFullDuplexStreamed:
		return filterv3.ProcessingMode_FULL_DUPLEX_STREAMED
	case BodyModeNone:
		return filterv3.ProcessingMode_NONE
	default:
		return filterv3.ProcessingMode_BUFFERED
	}
}

// Config is the ext_proc part of the router's configuration file, at its
// top level. The zero value means every default.
type Config struct {
	// MaxBodyBytes is the largest request body accepted; larger ones get 413.
	// Default 8 MiB. The gRPC message limit follows from it.
	MaxBodyBytes int64 `json:"maxBodyBytes,omitempty"`
	// DecisionHeader is where x-warmroute-decision goes: upstream (the
	// request to the engine only), client (also the client's response, for
	// debugging) or off. Default upstream.
	DecisionHeader DecisionHeaderMode `json:"decisionHeader,omitempty"`
	// MaxBufferedBytes bounds the request body bytes held by all streams at
	// once; a body that would exceed it gets 503 (outcome overloaded).
	// Default DefaultMaxBufferedBytes. It must be at least MaxBodyBytes.
	MaxBufferedBytes int64 `json:"maxBufferedBytes,omitempty"`
}

// DefaultMaxBodyBytes is the default Config.MaxBodyBytes.
const DefaultMaxBodyBytes = 8 << 20

// DefaultMaxBufferedBytes is the default Config.MaxBufferedBytes: 32
// maximum-size bodies at once, half the memory the chart requests for the
// router (512 MiB; limit 2 GiB). Parsing a body allocates about its size
// again while it is routed, and the index, tokenizers and their prefix
// caches (64 MiB per pool) need the rest, so a full budget stays inside the
// limit with room to spare.
const DefaultMaxBufferedBytes = 256 << 20

// WithDefaults returns a copy of c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxBufferedBytes == 0 {
		c.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	if c.DecisionHeader == "" {
		c.DecisionHeader = DecisionHeaderUpstream
	}
	return c
}

// MaxGRPCMessageBytes is the gRPC message limit a server with c needs: a
// buffered body of MaxBodyBytes plus room for headers and framing.
func (c Config) MaxGRPCMessageBytes() int { return int(c.WithDefaults().MaxBodyBytes) + 1<<20 }

// Validate reports every problem in c, joined, or nil.
func (c Config) Validate() error {
	var errs []error
	if c.MaxBodyBytes < 0 {
		errs = append(errs, fmt.Errorf("maxBodyBytes must not be negative, got %d", c.MaxBodyBytes))
	}
	if c.MaxBufferedBytes < 0 {
		errs = append(errs, fmt.Errorf("maxBufferedBytes must not be negative, got %d", c.MaxBufferedBytes))
	}
	if d := c.WithDefaults(); len(errs) == 0 && d.MaxBufferedBytes < d.MaxBodyBytes {
		errs = append(errs, fmt.Errorf("maxBufferedBytes (%d) must be at least maxBodyBytes (%d)", d.MaxBufferedBytes, d.MaxBodyBytes))
	}
	if err := c.DecisionHeader.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Options configures a Server: Config plus what is not a file setting. The
// zero value is valid: every zero field means its default.
type Options struct {
	Config
	// DefaultBodyMode applies to both directions when Envoy does not send
	// protocol_config. Default BodyModeBuffered.
	DefaultBodyMode BodyMode
	// DisableResponseParsing stops reading usage from response bodies; every
	// decision then gets Usage(0, 0, false). Deployments turn parsing off in
	// Envoy instead (response_body_mode NONE): parsing only happens when
	// Envoy sends response bodies.
	DisableResponseParsing bool
	// MaxResponseBytes bounds the memory spent on one response: the kept
	// body of a non-streaming response, or one line of a streaming one.
	// Beyond it the usage is unknown. Default DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

// DefaultMaxResponseBytes is the default Options.MaxResponseBytes: far above
// a completion's usage-bearing JSON body, small enough to keep per stream.
const DefaultMaxResponseBytes = 1 << 20

// Validate reports every problem in o, joined, or nil.
func (o Options) Validate() error {
	var errs []error
	if err := o.Config.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.MaxResponseBytes < 0 {
		errs = append(errs, fmt.Errorf("max response bytes must not be negative, got %d", o.MaxResponseBytes))
	}
	if _, ok := bodyModeNames[o.DefaultBodyMode]; !ok {
		errs = append(errs, fmt.Errorf("unknown default body mode %d", int(o.DefaultBodyMode)))
	}
	return errors.Join(errs...)
}

func (o Options) withDefaults() Options {
	o.Config = o.Config.WithDefaults()
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return o
}

// Server implements envoy.service.ext_proc.v3.ExternalProcessor: it routes
// each request Envoy sends it and keeps the chosen endpoint's load accounting
// until the response ends. Safe for concurrent use; build it with New (the
// zero value is not usable).
type Server struct {
	extprocv3.UnimplementedExternalProcessorServer

	picker  Picker
	opts    Options
	budget  *bodyBudget
	metrics *Metrics
	log     *slog.Logger
	// track wraps each decision a stream drives; nil drives it directly.
	// Tests set it to observe the lifecycle calls.
	track func(*scorer.Decision) lifecycle
}

// lifecycle is what a stream calls on a routing decision, in this order:
// Commit, Settle (once the answer naming the endpoint is sent), Served
// (when the proxy reports the endpoint it used), ResponseStarted, Failed
// (when the request failed), Usage, Release, and Done once the stream has
// ended, when nothing reads the decision any more. *scorer.Decision
// implements it.
type lifecycle interface {
	Commit()
	Settle()
	Served(endpoint string) scorer.ServedResult
	ResponseStarted()
	Failed()
	Usage(promptTokens, cachedTokens int, known bool)
	Release()
	Done()
}

// New returns a Server that routes with p and records into m, from
// NewMetrics (nil records into collectors registered nowhere); log may be nil
// to discard logs.
func New(p Picker, opts Options, m *Metrics, log *slog.Logger) (*Server, error) {
	if p == nil {
		return nil, errors.New("creating ext_proc server: picker is nil")
	}
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("creating ext_proc server: %w", err)
	}
	if m == nil {
		m, _ = NewMetrics(nil) // registers nothing, so cannot fail
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts = opts.withDefaults()
	budget := newBodyBudget(opts.MaxBufferedBytes, m.bufferedBytes)
	return &Server{picker: p, opts: opts, budget: budget, metrics: m, log: log}, nil
}

// received is one result of Recv.
type received struct {
	req *extprocv3.ProcessingRequest
	err error
	// held is what reserveReadAhead reserved for req, released when the
	// stream takes req over; refused is set instead when the budget could
	// not take it.
	held    int64
	refused error
}

// Process serves one ext_proc stream, that is one HTTP request and its
// response. One goroutine receives; this one handles messages in order, so
// all per-stream state is owned by a single goroutine.
func (s *Server) Process(srv extprocv3.ExternalProcessor_ProcessServer) error {
	ctx := srv.Context()
	s.metrics.streamsActive.Inc()
	defer s.metrics.streamsActive.Dec()
	st := newStream(ctx, s)
	// Ending on every return covers a broken stream and a cancelled client.
	defer st.finish()
	defer st.dropBody()

	done := make(chan struct{})
	defer close(done)
	msgs := make(chan received) // unbuffered: one message read ahead at most
	go s.receive(srv, msgs, done, &st.readAhead)
	for {
		select {
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case m := <-msgs:
			if m.held > 0 {
				s.budget.release(m.held) // the stream reserves what it keeps
				st.readAhead.Add(-m.held)
			}
			if errors.Is(m.err, io.EOF) {
				return nil
			}
			if m.err != nil {
				return m.err
			}
			if m.refused != nil {
				return st.refuse(srv, m.refused)
			}
			if finished, err := st.step(srv, m.req); finished || err != nil {
				return err
			}
		}
	}
}

// receive feeds out until Recv fails. gRPC makes Recv fail once Process has
// returned (the stream's context is cancelled), and done keeps the send from
// blocking after that, so the goroutine always ends with its stream.
// readAhead counts what it holds reserved for messages not yet taken over.
func (s *Server) receive(srv extprocv3.ExternalProcessor_ProcessServer, out chan<- received, done <-chan struct{}, readAhead *atomic.Int64) {
	for {
		req, err := srv.Recv()
		m := received{req: req, err: err}
		s.reserveReadAhead(&m)
		readAhead.Add(m.held)
		select {
		case out <- m:
		case <-done:
			if m.held > 0 {
				s.budget.release(m.held)
				readAhead.Add(-m.held)
			}
			return
		}
		if err != nil {
			return
		}
	}
}
