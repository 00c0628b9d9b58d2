package router

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/scorer"
)

// TestRouterWithoutEvents: with events disabled serve builds no NATS, no
// subscriber and no share (even when sharing is asked for), and the router
// is ready at once.
func TestRouterWithoutEvents(t *testing.T) {
	var cfg Config
	cfg.Events.Disabled, cfg.Events.Predictions.Share = true, true
	r, err := New(cfg.WithDefaults(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if r.bus != nil || r.sub != nil || r.share != nil || r.natsURL() != "" {
		t.Fatalf("events disabled, yet bus %v, subscriber %v, share %v, url %q", r.bus, r.sub, r.share, r.natsURL())
	}
	ready, err := r.startEvents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ready:
	default:
		t.Fatal("router without events is not ready at once")
	}
	r.closeEvents()
}

// TestReadinessFollowsTheBus: a router whose NATS goes away reports not
// ready (/readyz and gRPC health) once events.unreadyAfter has passed, and
// ready again when NATS is back.
func TestReadinessFollowsTheBus(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	srv, err := bus.StartEmbeddedWith(bus.EmbeddedOptions{Host: "127.0.0.1", Port: port})
	if err != nil {
		t.Fatal(err)
	}
	var cfg Config
	cfg.Pools = []scorer.PoolConfig{{Name: "m", Endpoints: []string{"10.0.0.1:8000"}}}
	cfg.Events.URL = srv.ClientURL()
	cfg.Events.UnreadyAfter = api.Duration(300 * time.Millisecond)
	grpcAddr, adminAddr, _ := startRouter(t, cfg)
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	state := func(want int, status healthpb.HealthCheckResponse_ServingStatus) func() string {
		return func() string {
			code, _ := httpGet(t, "http://"+adminAddr+"/readyz")
			if code != want {
				return fmt.Sprintf("/readyz %d, want %d", code, want)
			}
			// liveness stays SERVING: a bus outage must not restart the router
			for svc, want := range map[string]healthpb.HealthCheckResponse_ServingStatus{
				extProcService: status, readinessService: status, livenessService: healthpb.HealthCheckResponse_SERVING,
			} {
				resp, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{Service: svc})
				if err != nil || resp.Status != want {
					return fmt.Sprintf("health %q %v %v; want %v", svc, resp, err, want)
				}
			}
			return ""
		}
	}
	srv.Close()
	down := time.Now()
	testwait.Until(t, 5*time.Second, state(http.StatusServiceUnavailable, healthpb.HealthCheckResponse_NOT_SERVING))
	if took := time.Since(down); took < 300*time.Millisecond {
		t.Fatalf("not ready after %s, before events.unreadyAfter", took)
	}
	srv, err = bus.StartEmbeddedWith(bus.EmbeddedOptions{Host: "127.0.0.1", Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	testwait.Until(t, 10*time.Second, state(http.StatusOK, healthpb.HealthCheckResponse_SERVING))
}
