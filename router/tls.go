package router

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// serverTLS returns the gRPC listener's TLS configuration, or nil when TLS is off.
func serverTLS(c TLSConfig) (*tls.Config, error) {
	if !c.Enabled() {
		return nil, nil
	}
	var cert tls.Certificate
	var err error
	if c.CertFile != "" {
		cert, err = tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	} else {
		cert, err = selfSignedCert(time.Now())
	}
	if err != nil {
		return nil, fmt.Errorf("loading TLS certificate: %w", err)
	}
	// h2 is required by gRPC; Envoy negotiates it through ALPN.
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2"}}
	if c.ClientCAFile != "" {
		if cfg.ClientCAs, err = loadCAs(c.ClientCAFile); err != nil {
			return nil, err
		}
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// loadCAs reads a PEM bundle of CA certificates; one without any is an
// error, since it would refuse every client.
func loadCAs(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading client CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("reading client CA file %s: no PEM certificate in it", path)
	}
	return pool, nil
}

// selfSignedCert makes a development certificate for localhost, valid for a
// year. Envoy accepts it when its upstream TLS context has no validation context.
func selfSignedCert(now time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("generating key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("generating serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "warmroute self-signed"},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "warmroute"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("signing certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
