package router

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/scorer"
)

// startRouter runs a router on loopback listeners and returns its addresses
// and a stop function that waits for it to finish.
func startRouter(t *testing.T, cfg Config) (grpcAddr, adminAddr string, stop func() error) {
	t.Helper()
	a := startRouterAt(t, cfg)
	return a.grpc, a.admin, a.stop
}

// routerAddrs are a test router's listeners; debug is "" with debugAddr off.
type routerAddrs struct {
	grpc, admin, debug string
	stop               func() error
}

func startRouterAt(t *testing.T, cfg Config) routerAddrs {
	t.Helper()
	cfg.ShutdownGrace = api.Duration(2 * time.Second)
	if cfg.Events.Listen == "" {
		cfg.Events.Listen = "127.0.0.1:0" // never the shared default port
	}
	r, err := New(cfg.WithDefaults(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	al, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var dl net.Listener
	debug := ""
	if r.debug != nil {
		if dl, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		debug = dl.Addr().String()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.serve(ctx, gl, al, dl) }()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { stop() })
	waitReady(t, "http://"+al.Addr().String()+"/readyz")
	return routerAddrs{grpc: gl.Addr().String(), admin: al.Addr().String(), debug: debug, stop: stop}
}

// waitReady polls url until it answers 200: the router reports ready only
// once its event subscriber is running.
func waitReady(t *testing.T, url string) {
	t.Helper()
	testwait.Until(t, 10*time.Second, func() string {
		resp, err := http.Get(url)
		if err != nil {
			return fmt.Sprintf("%s not ready: %v", url, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Sprintf("%s not ready: %s", url, resp.Status)
		}
		return ""
	})
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestRouterAdminAndHealth(t *testing.T) {
	grpcAddr, adminAddr, stop := startRouter(t, Config{Pools: []scorer.PoolConfig{{Name: "m", Endpoints: []string{"10.0.0.1:8000"}}}})
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, _ := httpGet(t, "http://"+adminAddr+path); code != http.StatusOK {
			t.Errorf("%s = %d, want 200", path, code)
		}
	}
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	for _, svc := range []string{"", extProcService, livenessService, readinessService} {
		resp, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || resp.Status != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health %q = %v, %v; want SERVING", svc, resp, err)
		}
	}
	dest := routeHeaderOnly(t, conn)
	if dest != "10.0.0.1:8000" {
		t.Errorf("destination = %q, want 10.0.0.1:8000", dest)
	}
	_, metrics := httpGet(t, "http://"+adminAddr+"/metrics")
	for _, name := range []string{"warmroute_extproc_requests_total", "warmroute_extproc_decision_duration_seconds", "warmroute_scorer_inflight_requests", "warmroute_build_info"} {
		if !strings.Contains(metrics, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if _, err := http.Get("http://" + adminAddr + "/healthz"); err == nil {
		t.Error("admin still answers after shutdown")
	}
}

func TestRouterSelfSignedTLS(t *testing.T) {
	grpcAddr, _, _ := startRouter(t, Config{
		TLS:   TLSConfig{SelfSigned: true},
		Pools: []scorer.PoolConfig{{Name: "m", Endpoints: []string{"10.0.0.1:8000"}}},
	})
	creds := credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}) // self-signed by design
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if dest := routeHeaderOnly(t, conn); dest != "10.0.0.1:8000" {
		t.Errorf("destination over TLS = %q", dest)
	}
	plain, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := healthpb.NewHealthClient(plain).Check(ctx, &healthpb.HealthCheckRequest{}); err == nil {
		t.Error("plaintext client reached a TLS listener")
	}
}

func TestRouterDrainsOpenStreams(t *testing.T) {
	grpcAddr, adminAddr, stop := startRouter(t, Config{Pools: []scorer.PoolConfig{{Name: "m", Endpoints: []string{"10.0.0.1:8000"}}}})
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := extprocv3.NewExternalProcessorClient(conn).Process(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(headersRequest(true)); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	// While the stream is open the router must keep running but report not ready.
	testwait.Until(t, 5*time.Second, testwait.That("readyz 503 while draining", func() bool {
		code, _ := httpGet(t, "http://"+adminAddr+"/readyz")
		return code == http.StatusServiceUnavailable
	}))
	select {
	case err := <-stopped:
		t.Fatalf("router stopped (%v) while a stream was open", err)
	case <-time.After(100 * time.Millisecond):
	}
	stream.CloseSend()
	for {
		if _, err := stream.Recv(); err != nil {
			break
		}
	}
	if err := <-stopped; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

func headersRequest(endOfStream bool) *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestHeaders{
		RequestHeaders: &extprocv3.HttpHeaders{
			EndOfStream: endOfStream,
			Headers: &corev3.HeaderMap{Headers: []*corev3.HeaderValue{
				{Key: ":method", RawValue: []byte("GET")},
				{Key: ":path", RawValue: []byte("/v1/models")},
			}},
		},
	}}
}

// routeHeaderOnly sends a header-only request and returns the destination
// header the router set.
func routeHeaderOnly(t *testing.T, conn *grpc.ClientConn) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stream, err := extprocv3.NewExternalProcessorClient(conn).Process(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(headersRequest(true)); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	stream.CloseSend()
	for _, h := range resp.GetRequestHeaders().GetResponse().GetHeaderMutation().GetSetHeaders() {
		if h.GetHeader().GetKey() == api.DestinationHeader {
			return string(h.GetHeader().GetRawValue()) + h.GetHeader().GetValue()
		}
	}
	t.Fatalf("no destination header in %v", resp)
	return ""
}

// TestRouterExportsPausedForEveryEndpoint checks that every configured
// endpoint has a speculation_paused series before any request went there:
// endpoints never heard from are paused (1).
func TestRouterExportsPausedForEveryEndpoint(t *testing.T) {
	eps := []string{"10.0.0.1:8000", "10.0.0.2:8000"}
	_, adminAddr, _ := startRouter(t, Config{Pools: []scorer.PoolConfig{{Name: "m", Endpoints: eps}}})
	testwait.Until(t, 30*time.Second, func() string {
		_, metrics := httpGet(t, "http://"+adminAddr+"/metrics")
		for _, ep := range eps {
			if want := fmt.Sprintf(`warmroute_ttl_speculation_paused{endpoint=%q} 1`, ep); !strings.Contains(metrics, want) {
				return "/metrics lacks " + want
			}
		}
		return ""
	})
}

// TestFallbacksWarn: the router cannot see whether its proxy reads an
// endpoint list, so fallbacks on are announced at start-up with what they
// need; off, nothing is said.
func TestFallbacksWarn(t *testing.T) {
	for _, n := range []int{0, 1} {
		var logs strings.Builder
		var cfg Config
		cfg.Events.Disabled, cfg.Fallbacks = true, n
		r, err := New(cfg.WithDefaults(), slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		r.closeEvents()
		warned := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "ORIGINAL_DST")
		if warned != (n > 0) {
			t.Errorf("fallbacks %d: warned %v; log:\n%s", n, warned, logs.String())
		}
	}
}
