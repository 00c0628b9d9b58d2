package router

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/warmroute/warmroute/affinity"
	"github.com/warmroute/warmroute/buildinfo"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/predictions"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/index/ttl"
)

// Router is `warmroute serve` assembled from its Config: the ext_proc gRPC
// server with its health service, the admin HTTP server, and behind them the
// event ingestion, the TTL controller and the decision pipeline. Build it
// with New; Run serves until its context ends. Not for concurrent Run calls.
type Router struct {
	cfg    Config
	log    *slog.Logger
	grpc   *grpc.Server
	health *health.Server
	admin  *http.Server
	debug  *http.Server // nil with debugAddr off
	ready  atomic.Bool
	pipe   *pipeline
	ttl    *ttl.Controller
	reg    prometheus.Registerer

	// Event ingestion, nil with events disabled: the NATS client, the
	// subscriber (started by serve with the index as its sink) and the
	// prediction share (nil unless sharing; started by serve too).
	bus        *bus.Client
	sub        *subscriber.Subscriber
	subMetrics *subscriber.Metrics
	share      *predictions.Share
	// affinity is the response-id table; affinityShare shares it (nil
	// unless predictions are shared: the same replicas need both).
	affinity      *affinity.Store
	affinityShare *affinity.Share
	// kube follows the pools' InferencePools; nil when no pool names one.
	kube *kubeMembership
}

// New builds the router in dependency order: NATS, the event subscriber,
// the TTL controller reading the subscriber's freshness, the pipeline (whose
// scorer gets the subscriber's engine load and the prediction share), then
// the servers. Nothing runs until serve.
func New(cfg Config, log *slog.Logger) (_ *Router, err error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if _, err := buildinfo.NewMetrics(reg); err != nil {
		return nil, err
	}
	r := &Router{cfg: cfg, log: log, health: health.NewServer(), reg: reg}
	if cfg.Fallbacks > 0 {
		// The router cannot see the proxy; an ORIGINAL_DST cluster answers
		// a list 503 no_healthy_upstream.
		log.Warn("fallbacks on: the proxy must read the comma-separated endpoint list (Envoy's override_host policy on a cluster that knows the model servers, as in e2e/envoy/fallbacks.yaml and the chart); an ORIGINAL_DST cluster answers every request 503",
			"fallbacks", cfg.Fallbacks)
	}
	defer func() {
		if err != nil {
			r.closeEvents()
		}
	}()
	if err = r.openEvents(); err != nil {
		return nil, err
	}
	if r.ttl, err = newTTL(cfg, r.sub, reg, log); err != nil {
		return nil, fmt.Errorf("creating ttl controller: %w", err)
	}
	hooks := pipelineHooks{ttl: r.ttl, observer: r.ttl}
	if r.sub != nil {
		hooks.engine, hooks.liveness = r.sub, r.sub
	}
	if r.share != nil {
		hooks.predictions = r.share
	}
	if err = r.openAffinity(); err != nil {
		return nil, err
	}
	hooks.affinity = r.affinity
	if r.pipe, err = newPipeline(cfg, reg, hooks); err != nil {
		return nil, err
	}
	if r.kube, err = newKubeMembership(cfg, r.pipe, reg, log); err != nil {
		return nil, err
	}
	procMetrics, err := extproc.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	proc, err := extproc.New(r.pipe.scorer, extproc.Options{Config: cfg.Proxy}, procMetrics, log)
	if err != nil {
		return nil, fmt.Errorf("creating ext_proc server: %w", err)
	}
	maxMsg := cfg.Proxy.MaxGRPCMessageBytes()
	streamWin, connWin := cfg.Proxy.GRPCWindows() // bound what gRPC reads ahead (extproc/readahead.go)
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(maxMsg), grpc.MaxSendMsgSize(maxMsg),
		grpc.InitialWindowSize(streamWin), grpc.InitialConnWindowSize(connWin)}
	tlsCfg, err := serverTLS(cfg.TLS)
	if err != nil {
		return nil, err
	}
	if tlsCfg != nil {
		opts = append(opts, grpc.Creds(extproc.CountHandshakeFailures(credentials.NewTLS(tlsCfg), procMetrics, log)))
	}
	r.grpc = grpc.NewServer(opts...)
	r.setServing(false) // known but NOT_SERVING until the index is ready
	r.health.SetServingStatus(livenessService, healthpb.HealthCheckResponse_SERVING)
	extprocv3.RegisterExternalProcessorServer(r.grpc, proc)
	healthpb.RegisterHealthServer(r.grpc, r.health)
	r.admin = &http.Server{Handler: r.adminMux(reg), ReadHeaderTimeout: 5 * time.Second}
	if cfg.DebugAddr != DebugOff {
		r.debug = &http.Server{Handler: r.debugMux(), ReadHeaderTimeout: 5 * time.Second}
	}
	return r, nil
}

// The gRPC health service names: the ext_proc service (what Envoy's gRPC
// health check asks by default) and GIE's endpoint-picker convention,
// where "liveness" answers SERVING while the process serves and "readiness"
// follows readiness like the others.
const (
	extProcService   = "envoy.service.ext_proc.v3.ExternalProcessor"
	livenessService  = "liveness"
	readinessService = "readiness"
)

func (r *Router) adminMux(reg *prometheus.Registry) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !r.ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
	})
	return mux
}

// Run serves until ctx ends, then drains: health turns NOT_SERVING and
// /readyz fails first, so Envoy and Kubernetes stop sending new streams, then
// open streams get up to ShutdownGrace to finish.
func (r *Router) Run(ctx context.Context) error {
	grpcLn, err := net.Listen("tcp", r.cfg.GRPCAddr)
	if err != nil {
		return fmt.Errorf("listening for ext_proc: %w", err)
	}
	adminLn, err := net.Listen("tcp", r.cfg.AdminAddr)
	if err != nil {
		grpcLn.Close()
		return fmt.Errorf("listening for admin: %w", err)
	}
	var debugLn net.Listener
	if r.debug != nil {
		if debugLn, err = r.listenDebug(); err != nil {
			grpcLn.Close()
			adminLn.Close()
			return err
		}
	}
	return r.serve(ctx, grpcLn, adminLn, debugLn)
}

// serve runs the servers on the given listeners (debugLn nil when the debug
// server is off) until ctx ends or one fails.
// The event subscriber, the TTL controller and the pipeline's sweeps run
// until the ext_proc streams have drained, so in-flight decisions keep them.
// The router reports ready once the event stream has been replayed.
func (r *Router) serve(ctx context.Context, grpcLn, adminLn, debugLn net.Listener) error {
	bg, stopBG := context.WithCancel(context.Background())
	defer stopBG()
	defer r.closeEvents()
	ready, err := r.startEvents(bg)
	if err != nil {
		grpcLn.Close()
		adminLn.Close()
		if debugLn != nil {
			debugLn.Close()
		}
		return err
	}
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	wg.Go(func() { errc <- r.grpc.Serve(grpcLn) })
	wg.Go(func() { errc <- r.admin.Serve(adminLn) })
	debugAt := DebugOff
	if debugLn != nil {
		debugAt = debugLn.Addr().String()
		wg.Go(func() { errc <- r.debug.Serve(debugLn) })
	}
	wg.Go(func() { r.pipe.run(bg) })
	wg.Go(func() { r.ttl.Run(bg) })
	if r.kube != nil {
		wg.Go(func() {
			if err := r.kube.run(bg); err != nil {
				errc <- err
			}
		})
	}
	r.log.Info("warmroute listening", "grpc", grpcLn.Addr().String(), "admin", adminLn.Addr().String(),
		"debug", debugAt, "tls", r.cfg.TLS.Enabled(), "mtls", r.cfg.TLS.ClientCAFile != "", "pools", len(r.cfg.Pools), "nats", r.natsURL(), "ttl_mode", r.cfg.TTL.Mode)
	var runErr error
	select {
	case <-ready:
		if r.share != nil {
			select { // the share's replay is bounded by its timeout
			case <-r.share.Ready():
			case <-ctx.Done():
			}
		}
		if r.kube != nil {
			r.kube.waitSynced(ctx) // the pools' members are known
		}
		stopWatch := r.watchBus(ctx) // ready, unless the bus has been down too long
		select {
		case <-ctx.Done():
		case err := <-errc:
			runErr = fmt.Errorf("server stopped: %w", err)
		}
		stopWatch()
	case <-ctx.Done():
	case err := <-errc:
		runErr = fmt.Errorf("server stopped: %w", err)
	}
	r.shutdown()
	stopBG()
	wg.Wait() // every goroutine started here has returned
	return runErr
}

func (r *Router) setServing(on bool) {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if on {
		st = healthpb.HealthCheckResponse_SERVING
	}
	r.health.SetServingStatus("", st)
	r.health.SetServingStatus(extProcService, st)
	r.health.SetServingStatus(readinessService, st)
	r.ready.Store(on)
}

func (r *Router) shutdown() {
	r.setServing(false)
	grace := r.cfg.ShutdownGrace.D()
	r.log.Info("draining ext_proc streams", "grace", grace)
	done := make(chan struct{})
	go func() { r.grpc.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		r.log.Warn("grace period over; closing remaining streams")
		r.grpc.Stop()
		<-done
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r.admin.Shutdown(ctx)
	if r.debug != nil {
		r.debug.Shutdown(ctx)
	}
	r.log.Info("warmroute stopped")
}
