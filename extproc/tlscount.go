package extproc

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"strings"

	"google.golang.org/grpc/credentials"
)

// Handshake failure reasons, the closed label set of
// warmroute_extproc_tls_handshake_failures_total.
const (
	handshakeNoClientCert = "no_client_cert" // mTLS: the client sent no certificate
	handshakeUnknownCA    = "unknown_ca"     // its certificate is not signed by a client CA
	handshakeProtocol     = "protocol"       // not TLS, or no common version, cipher or ALPN protocol
	handshakeOther        = "other"          // anything else: expired certificate, reset, timeout
)

// CountHandshakeFailures wraps a server's transport credentials so that every
// handshake they refuse is counted by reason in m and logged at debug on log
// (nil: not logged). gRPC drops a failed handshake's connection without a
// word to the service, so without this a client refused for its
// certificate leaves no trace in the router.
func CountHandshakeFailures(c credentials.TransportCredentials, m *Metrics, log *slog.Logger) credentials.TransportCredentials {
	return countingCreds{TransportCredentials: c, m: m, log: log}
}

type countingCreds struct {
	credentials.TransportCredentials
	m   *Metrics
	log *slog.Logger
}

func (c countingCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	out, info, err := c.TransportCredentials.ServerHandshake(conn)
	if err != nil {
		reason := handshakeReason(err)
		c.m.handshakeFailures.WithLabelValues(reason).Inc()
		if c.log != nil {
			c.log.Debug("refused a TLS handshake on the ext_proc listener", "reason", reason,
				"remote", conn.RemoteAddr().String(), "err", err)
		}
	}
	return out, info, err
}

func (c countingCreds) Clone() credentials.TransportCredentials {
	return countingCreds{TransportCredentials: c.TransportCredentials.Clone(), m: c.m, log: c.log}
}

// handshakeReason classifies a crypto/tls server handshake error. crypto/tls
// reports a missing client certificate and most protocol mismatches only as
// error text, so those are matched by their (stable) messages.
func handshakeReason(err error) string {
	var unknownCA x509.UnknownAuthorityError
	var record tls.RecordHeaderError
	msg := err.Error()
	switch {
	case errors.As(err, &unknownCA):
		return handshakeUnknownCA
	case strings.Contains(msg, "didn't provide a certificate"):
		return handshakeNoClientCert
	case errors.As(err, &record), strings.Contains(msg, "unsupported versions"),
		strings.Contains(msg, "no cipher suite"), strings.Contains(msg, "no application protocol"),
		strings.Contains(msg, "no mutually supported"):
		return handshakeProtocol
	}
	return handshakeOther
}
