package testpki_test

import (
	"crypto/tls"
	"net"
	"testing"

	"github.com/warmroute/warmroute/internal/testpki"
)

// TestHandshake: a server and a client certificate of one CA complete a
// mutually verified handshake; a client certificate of another CA does not.
func TestHandshake(t *testing.T) {
	ca, other := testpki.New(t, "ca"), testpki.New(t, "other")
	server := ca.Server("srv").TLSCertificate(t)
	for _, tc := range []struct {
		name   string
		client tls.Certificate
		ok     bool
	}{
		{"same CA", ca.Client("c").TLSCertificate(t), true},
		{"other CA", other.Client("c").TLSCertificate(t), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, cc := net.Pipe()
			srv := tls.Server(sc, &tls.Config{Certificates: []tls.Certificate{server},
				ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()})
			cli := tls.Client(cc, &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost",
				GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &tc.client, nil }})
			done := make(chan error, 1)
			go func() { done <- srv.Handshake(); sc.Close() }()
			// The server's verdict is the one that counts: under TLS 1.3 the
			// client finishes before the server has judged its certificate.
			// Reading until the server closes takes its tickets or alert off
			// the unbuffered pipe.
			if cli.Handshake() == nil {
				_, _ = cli.Read(make([]byte, 1))
			}
			serr := <-done
			cc.Close()
			if (serr == nil) != tc.ok {
				t.Errorf("server handshake = %v, want ok %t", serr, tc.ok)
			}
		})
	}
}
