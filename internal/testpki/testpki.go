// Package testpki makes a throwaway certificate authority for tests: a CA,
// a server certificate for localhost and client certificates, generated at
// run time into the test's temporary directory so that no key is ever
// committed.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a test certificate authority. Its files live in Dir until the test
// ends. Not safe for concurrent use.
type CA struct {
	t    *testing.T
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// CertFile is the CA certificate in PEM, the file a peer trusts.
	CertFile string
}

// Pair is a certificate and its key, as PEM files.
type Pair struct {
	CertFile, KeyFile string
}

// New makes a CA named name in a fresh temporary directory of t.
func New(t *testing.T, name string) *CA {
	t.Helper()
	ca := &CA{t: t, dir: t.TempDir()}
	ca.key = newKey(t)
	tmpl := template(t, name)
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &ca.key.PublicKey, ca.key)
	if err != nil {
		t.Fatalf("signing CA certificate: %v", err)
	}
	if ca.cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatalf("parsing CA certificate: %v", err)
	}
	ca.CertFile = ca.write(name+"-ca.pem", "CERTIFICATE", der)
	return ca
}

// Server issues a server certificate for localhost, 127.0.0.1 and ::1.
func (ca *CA) Server(name string) Pair {
	ca.t.Helper()
	tmpl := template(ca.t, name)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	tmpl.DNSNames = []string{"localhost"}
	tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	return ca.issue(name, tmpl)
}

// Client issues a client certificate with common name name.
func (ca *CA) Client(name string) Pair {
	ca.t.Helper()
	tmpl := template(ca.t, name)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return ca.issue(name, tmpl)
}

// TLSCertificate loads p for a crypto/tls client or server.
func (p Pair) TLSCertificate(t *testing.T) tls.Certificate {
	t.Helper()
	c, err := tls.LoadX509KeyPair(p.CertFile, p.KeyFile)
	if err != nil {
		t.Fatalf("loading %s: %v", p.CertFile, err)
	}
	return c
}

// Pool is a certificate pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

func (ca *CA) issue(name string, tmpl *x509.Certificate) Pair {
	ca.t.Helper()
	key := newKey(ca.t)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		ca.t.Fatalf("signing %s: %v", name, err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		ca.t.Fatalf("encoding key of %s: %v", name, err)
	}
	return Pair{CertFile: ca.write(name+".pem", "CERTIFICATE", der),
		KeyFile: ca.write(name+"-key.pem", "PRIVATE KEY", kder)}
}

func (ca *CA) write(file, kind string, der []byte) string {
	ca.t.Helper()
	path := filepath.Join(ca.dir, file)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		ca.t.Fatalf("writing %s: %v", path, err)
	}
	return path
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generating key: %v", err)
	}
	return k
}

func template(t *testing.T, name string) *x509.Certificate {
	t.Helper()
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		t.Fatalf("generating serial: %v", err)
	}
	now := time.Now()
	return &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour)}
}
