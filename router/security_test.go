package router

import (
	"context"
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/internal/testpki"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/scorer"
)

var onePool = []scorer.PoolConfig{{Name: "m", Endpoints: []string{"10.0.0.1:8000"}}}

// TestRouterDebugAddress: the debug endpoints answer on the debug address
// only, pprof only when enabled, and the admin address keeps its probes.
func TestRouterDebugAddress(t *testing.T) {
	debugPaths := []string{"/debug/ttl", api.IndexInfoPath, api.IndexEntriesPath + "?endpoint=10.0.0.1:8000"}
	for _, tc := range []struct {
		name  string
		pprof bool
	}{{"pprof off", false}, {"pprof on", true}} {
		t.Run(tc.name, func(t *testing.T) {
			a := startRouterAt(t, Config{Server: Server{DebugPprof: tc.pprof}, Routing: Routing{Pools: onePool}})
			for _, path := range debugPaths {
				if code, _ := httpGet(t, "http://"+a.admin+path); code != http.StatusNotFound {
					t.Errorf("admin %s = %d, want 404: debug endpoints are not on the admin address", path, code)
				}
				if code, _ := httpGet(t, "http://"+a.debug+path); code != http.StatusOK {
					t.Errorf("debug %s = %d, want 200", path, code)
				}
			}
			for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
				if code, _ := httpGet(t, "http://"+a.admin+path); code != http.StatusOK {
					t.Errorf("admin %s = %d, want 200", path, code)
				}
			}
			want := http.StatusNotFound
			if tc.pprof {
				want = http.StatusOK
			}
			for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/cmdline"} {
				if code, _ := httpGet(t, "http://"+a.debug+path); code != want {
					t.Errorf("debug %s = %d, want %d", path, code, want)
				}
				if code, _ := httpGet(t, "http://"+a.admin+path); code != http.StatusNotFound {
					t.Errorf("admin %s = %d, want 404", path, code)
				}
			}
		})
	}
}

func TestRouterDebugOff(t *testing.T) {
	a := startRouterAt(t, Config{Server: Server{DebugAddr: DebugOff}, Routing: Routing{Pools: onePool}})
	if a.debug != "" {
		t.Fatalf("debug server built with debugAddr off")
	}
	if code, _ := httpGet(t, "http://"+a.admin+api.IndexInfoPath); code != http.StatusNotFound {
		t.Errorf("admin %s = %d with debug off, want 404", api.IndexInfoPath, code)
	}
}

// TestRouterMutualTLS: with tls.clientCAFile, a client presenting a
// certificate of that CA is served; one without a certificate, or with one
// from another CA, is refused at the handshake.
func TestRouterMutualTLS(t *testing.T) {
	ca, other := testpki.New(t, "envoy-ca"), testpki.New(t, "other-ca")
	server := ca.Server("warmroute")
	a := startRouterAt(t, Config{
		Server:  Server{TLS: TLSConfig{CertFile: server.CertFile, KeyFile: server.KeyFile, ClientCAFile: ca.CertFile}},
		Routing: Routing{Pools: onePool},
	})
	dial := func(certs ...tls.Certificate) *grpc.ClientConn {
		creds := credentials.NewTLS(&tls.Config{RootCAs: ca.Pool(), ServerName: "localhost",
			// Send the certificate even when the router's request names
			// only its own CA, which crypto/tls would honour by sending none.
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
				if len(certs) == 0 {
					return &tls.Certificate{}, nil
				}
				return &certs[0], nil
			}})
		conn, err := grpc.NewClient(a.grpc, grpc.WithTransportCredentials(creds))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	plain, err := grpc.NewClient(a.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, tc := range []struct {
		name   string
		conn   *grpc.ClientConn
		reason string // of warmroute_extproc_tls_handshake_failures_total
	}{
		{"no client certificate", dial(), "no_client_cert"},
		{"certificate of another CA", dial(other.Client("envoy").TLSCertificate(t)), "unknown_ca"},
		{"no TLS at all", plain, "protocol"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if _, err := healthpb.NewHealthClient(tc.conn).Check(ctx, &healthpb.HealthCheckRequest{}); err == nil {
				t.Error("client was served without a certificate of the client CA")
			}
			series := `warmroute_extproc_tls_handshake_failures_total{reason="` + tc.reason + `"}`
			testwait.Until(t, 10*time.Second, testwait.That(series+" counted", func() bool {
				_, body := httpGet(t, "http://"+a.admin+"/metrics")
				return strings.Contains(body, series+" ")
			}))
		})
	}
	good := dial(ca.Client("envoy").TLSCertificate(t))
	if dest := routeHeaderOnly(t, good); dest != "10.0.0.1:8000" {
		t.Errorf("destination over mutual TLS = %q", dest)
	}
}

func TestServerTLSClientCA(t *testing.T) {
	ca := testpki.New(t, "ca")
	for _, tc := range []struct {
		name    string
		cfg     TLSConfig
		wantErr bool
	}{
		{"no client CA", TLSConfig{SelfSigned: true}, false},
		{"client CA", TLSConfig{SelfSigned: true, ClientCAFile: ca.CertFile}, false},
		{"missing client CA file", TLSConfig{SelfSigned: true, ClientCAFile: t.TempDir() + "/none.pem"}, true},
		{"client CA file without PEM", TLSConfig{SelfSigned: true, ClientCAFile: ca.Server("s").KeyFile}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := serverTLS(tc.cfg)
			if (err != nil) != tc.wantErr {
				t.Fatalf("serverTLS = %v, want error %t", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			wantAuth := tls.NoClientCert
			if tc.cfg.ClientCAFile != "" {
				wantAuth = tls.RequireAndVerifyClientCert
			}
			if got.ClientAuth != wantAuth {
				t.Errorf("ClientAuth = %v, want %v", got.ClientAuth, wantAuth)
			}
		})
	}
}

func TestValidateSecuritySettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Server
		ok   bool
	}{
		{"defaults", Server{}, true},
		{"debug off", Server{DebugAddr: DebugOff}, true},
		{"debug elsewhere", Server{DebugAddr: "10.0.0.1:6060", DebugPprof: true}, true},
		{"debug not host:port", Server{DebugAddr: "localhost"}, false},
		{"pprof without debug", Server{DebugAddr: DebugOff, DebugPprof: true}, false},
		{"client CA without TLS", Server{TLS: TLSConfig{ClientCAFile: "ca.pem"}}, false},
		{"client CA with TLS", Server{TLS: TLSConfig{SelfSigned: true, ClientCAFile: "ca.pem"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Config{Server: tc.s}.Validate()
			if (err == nil) != tc.ok {
				t.Errorf("Validate = %v, want ok %t", err, tc.ok)
			}
		})
	}
}
