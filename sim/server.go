package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/warmroute/warmroute/api"
)

// Server is the simulator's HTTP face: the OpenAI API, /health and /metrics
// over one Engine, with metrics on a registry of its own so several
// simulators can live in one test process. Create it with New (the zero
// value is not usable); it is safe for concurrent use.
type Server struct {
	opts    Options
	engine  *Engine
	reg     *prometheus.Registry
	metrics *serverMetrics
	models  map[string]bool // base models and LoRA adapters
	loras   map[string]bool
	started int64 // unix seconds, reported as the models' creation time
	handler http.Handler
	stored  responseStore // stored Responses answers (agents.go)
}

// New returns a simulator configured by opts (defaults applied).
func New(opts Options) (*Server, error) {
	opts = opts.WithDefaults()
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("validating sim options: %w", err)
	}
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	engine, err := NewEngine(opts, m)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, engine: engine, reg: reg, metrics: m.server, models: map[string]bool{},
		loras: map[string]bool{}, started: time.Now().Unix()}
	for _, name := range opts.Models {
		s.models[name] = true
	}
	for _, name := range opts.LoRAAdapters {
		s.models[name], s.loras[name] = true, true
	}
	s.handler = s.routes()
	return s, nil
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /v1/completions", s.generate(completionsAPI{}))
	mux.Handle("POST /v1/chat/completions", s.generate(chatAPI{}))
	mux.Handle("POST /v1/responses", s.agent(apiResponses))
	mux.Handle("POST /v1/messages", s.agent(apiMessages))
	mux.HandleFunc("GET /v1/models", s.listModels)
	mux.HandleFunc("GET /health", s.health)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("POST /tokenize", s.tokenize)
	s.debugRoutes(mux)
	mux.HandleFunc("/", s.noRoute)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(api.ServedByHeader, s.opts.ID)
		mux.ServeHTTP(w, r)
	})
}

// Handler returns the simulator's HTTP handler, for tests that bring their
// own server (httptest).
func (s *Server) Handler() http.Handler { return s.handler }

// Engine is the simulator's engine, for in-process tests that drive faults
// or read the cache directly.
func (s *Server) Engine() *Engine { return s.engine }

// Close releases the KV event sockets; Serve calls it when it returns.
// It is safe to call more than once.
func (s *Server) Close() { s.engine.Close() }

// ID is the name this simulator puts in the x-warmroute-served-by header.
func (s *Server) ID() string { return s.opts.ID }

// Run listens on Options.Addr and serves until ctx ends; see Serve.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", s.opts.Addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends, then shuts down gracefully: it stops
// accepting, lets in-flight requests finish for up to Options.ShutdownGrace,
// then cancels the rest, and returns when every handler has returned. It
// closes ln and, on return, the KV event sockets (see Close). The error is nil after a shutdown caused by ctx.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	defer s.Close() // after drain: handlers may still publish events
	var handlers handlerGroup
	defer handlers.drain()
	base, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests() // before drain: handlers must not outlive Serve
	srv := &http.Server{
		Handler:           handlers.wrap(s.handler),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		srv.Close()
		return fmt.Errorf("serving sim http: %w", err)
	case <-ctx.Done():
	}
	return s.shutdown(srv, served, cancelRequests)
}

func (s *Server) shutdown(srv *http.Server, served <-chan error, cancelRequests context.CancelFunc) error {
	graceCtx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownGrace)
	defer cancel()
	err := srv.Shutdown(graceCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		// Handlers still sleeping (long x-sim-delay, slow decode) see their
		// request context end and return; Close then drops the connections.
		cancelRequests()
		err = srv.Close()
	}
	if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("serving sim http: %w", serveErr)
	}
	if err != nil {
		return fmt.Errorf("shutting down sim http: %w", err)
	}
	return nil
}

// newMeta starts a response: a fresh id and the creation time.
func (s *Server) newMeta(d dialect, model string) responseMeta {
	return responseMeta{
		ID:      d.idPrefix() + strconv.FormatUint(rand.Uint64(), 16),
		Created: time.Now().Unix(),
		Model:   model,
	}
}
