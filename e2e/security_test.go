package e2e

import (
	"context"
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/warmroute/warmroute/e2e/envoy"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/internal/testpki"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/router"
)

// TestDecisionHeaderStaysUpstream: through the real Envoy, the decision
// header reaches the engine (Envoy's access log prints the forwarded
// request's copy) but not the client, unless decisionHeader is client.
func TestDecisionHeaderStaysUpstream(t *testing.T) {
	for _, tc := range []struct {
		mode     extproc.DecisionHeaderMode
		toClient bool
	}{{"", false}, {extproc.DecisionHeaderClient, true}} {
		name := string(tc.mode)
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			st := newStack(t, harness.Options{DecisionHeader: tc.mode})
			r := mustDo(t, http.MethodPost, st.URL("/v1/completions"), mustJSON(t, completionRequest("Is my prompt cached?", false)), nil)
			if r.status != http.StatusOK {
				t.Fatalf("status = %v, want 200", r)
			}
			servedBy(t, st, r)
			got := r.header.Get("x-warmroute-decision")
			if (got != "") != tc.toClient {
				t.Errorf("client response decision header = %q, want present %t", got, tc.toClient)
			}
			testwait.Until(t, 5*time.Second, testwait.That("Envoy's access log shows the decision on the forwarded request", func() bool {
				return strings.Contains(st.Envoy.Tail(20), "decision=basis=")
			}))
		})
	}
}

// TestMutualTLSExtProc: with tls.clientCAFile the router serves Envoy, which
// presents a certificate of that CA, and refuses gRPC clients without one
// or with one from another CA; requests through Envoy keep succeeding.
func TestMutualTLSExtProc(t *testing.T) {
	ca, other := testpki.New(t, "e2e"), testpki.New(t, "stranger")
	server, envoyCert := ca.Server("warmroute"), ca.Client("envoy")
	st := newStack(t, harness.Options{
		Template:  envoy.Buffered,
		RouterTLS: router.TLSConfig{CertFile: server.CertFile, KeyFile: server.KeyFile, ClientCAFile: ca.CertFile},
		EnvoyTLS:  &envoy.UpstreamTLS{CAFile: ca.CertFile, CertFile: envoyCert.CertFile, KeyFile: envoyCert.KeyFile},
	})
	good := func(when string) {
		t.Helper()
		r := mustDo(t, http.MethodPost, st.URL("/v1/completions"), mustJSON(t, completionRequest("Over mutual TLS "+when, false)), nil)
		if r.status != http.StatusOK {
			t.Fatalf("request %s: status = %v, want 200", when, r)
		}
		servedBy(t, st, r)
	}
	good("first")
	for _, tc := range []struct {
		name   string
		certs  []tls.Certificate
		served bool
	}{
		{"no client certificate", nil, false},
		{"certificate of another CA", []tls.Certificate{other.Client("intruder").TLSCertificate(t)}, false},
		// The control: the same client with a certificate of the CA is
		// served, so the refusals above are the certificate's doing.
		{"certificate of the CA", []tls.Certificate{ca.Client("operator").TLSCertificate(t)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			creds := credentials.NewTLS(&tls.Config{RootCAs: ca.Pool(), ServerName: "localhost",
				// Send the certificate even though the router's request
				// names only its own CA, which crypto/tls would honour.
				GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
					if len(tc.certs) == 0 {
						return &tls.Certificate{}, nil
					}
					return &tc.certs[0], nil
				}})
			conn, err := grpc.NewClient(st.Router.GRPCAddr, grpc.WithTransportCredentials(creds))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
			switch {
			case tc.served && err != nil:
				t.Fatalf("router refused a client with a certificate of its client CA: %v", err)
			case !tc.served && err == nil:
				t.Fatalf("router served a client with %s: %v", tc.name, resp)
			case !tc.served:
				t.Logf("refused: %v", err)
			}
		})
	}
	good("after the refusals")
	routed := scrape(t, st).Sum("warmroute_extproc_requests_total", map[string]string{"outcome": "routed"})
	if routed != 2 {
		t.Errorf("router routed %v requests, want the 2 sent through Envoy", routed)
	}
}
