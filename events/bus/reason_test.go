package bus_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/internal/testwait"
)

func TestReasonOf(t *testing.T) {
	tests := []struct {
		err  error
		want bus.Reason
	}{
		{nats.ErrAuthorization, bus.ReasonAuthorization},
		{fmt.Errorf("wrapped: %w", nats.ErrAuthExpired), bus.ReasonAuthorization},
		{errors.New("nats: Authorization Violation"), bus.ReasonAuthorization},
		{fmt.Errorf("%w: Permissions Violation for Publish to x", nats.ErrPermissionViolation), bus.ReasonPermission},
		{nats.ErrSecureConnRequired, bus.ReasonTLS},
		{errors.New("remote error: tls: certificate required"), bus.ReasonTLS},
		{x509.UnknownAuthorityError{}, bus.ReasonTLS},
		{io.EOF, bus.ReasonIO},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, bus.ReasonIO},
		{nats.ErrConnectionClosed, bus.ReasonClosed},
		{errors.New("something else"), bus.ReasonOther},
		{nil, bus.ReasonOther},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.err), func(t *testing.T) {
			if got := bus.ReasonOf(tt.err); got != tt.want {
				t.Fatalf("ReasonOf(%v) = %s, want %s", tt.err, got, tt.want)
			}
		})
	}
}

// TestMonitorMissingClientCertificate: an embedded server that verifies
// client certificates refuses a client without one, and the client's
// monitor reports it as a TLS failure; the router's in-process connection
// needs no certificate.
func TestMonitorMissingClientCertificate(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := writeCA(t, dir)
	writeLeaf(t, dir, "server", ca, caKey)
	conf := writeConf(t, fmt.Sprintf("tls {\n cert_file: %q\n key_file: %q\n ca_file: %q\n verify: true\n}\n",
		filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem"), filepath.Join(dir, "ca.pem")))
	srv, err := bus.Open(bus.Config{Listen: "0.0.0.0:0", Server: bus.ServerConfig{Config: conf}}, "router", nil, nil)
	if err != nil {
		t.Fatalf("a server verifying client certificates may listen beyond loopback: %v", err)
	}
	defer srv.Close()
	if err := srv.Conn().Flush(); err != nil {
		t.Fatalf("in-process connection: %v", err)
	}
	_, port, _ := net.SplitHostPort(srv.URL()[len("nats://"):])
	url := "tls://127.0.0.1:" + port
	c, err := bus.Open(bus.Config{URL: url, TLS: bus.TLSConfig{CAFile: filepath.Join(dir, "ca.pem")}}, "no-cert", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	testwait.Until(t, 5*time.Second, testwait.That("down for tls", func() bool {
		_, err := c.Down()
		var de *bus.DownError
		return errors.As(err, &de) && de.Reason == bus.ReasonTLS
	}))
	writeLeaf(t, dir, "client", ca, caKey)
	ok, err := bus.Open(bus.Config{URL: url, TLS: bus.TLSConfig{CAFile: filepath.Join(dir, "ca.pem"),
		CertFile: filepath.Join(dir, "client.pem"), KeyFile: filepath.Join(dir, "client-key.pem")}}, "with-cert", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ok.Close()
	testwait.Until(t, 5*time.Second, testwait.That("client with a certificate up", func() bool {
		_, err := ok.Down()
		return err == nil
	}))
}

func writeCA(t *testing.T, dir string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, "ca.pem"), "CERTIFICATE", der)
	ca, _ := x509.ParseCertificate(der)
	return ca, key
}

func writeLeaf(t *testing.T, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, name+".pem"), "CERTIFICATE", der)
	kd, _ := x509.MarshalECPrivateKey(key)
	writePEM(t, filepath.Join(dir, name+"-key.pem"), "EC PRIVATE KEY", kd)
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
