package bus

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/nats-io/nats.go"
)

// Reason is why a NATS connection is down or what the server refused, from
// a closed set so that it can label metrics.
type Reason string

// Reasons, from the most specific to the catch-all.
const (
	ReasonAuthorization Reason = "authorization" // bad or missing user, password, token, NKey or JWT
	ReasonPermission    Reason = "permission"    // a publish or subscribe the server's permissions forbid
	ReasonTLS           Reason = "tls"           // handshake, certificate or TLS-required mismatch
	ReasonIO            Reason = "io"            // refused, reset, timed out, unreachable
	ReasonClosed        Reason = "closed"        // the client gave up or was closed
	ReasonOther         Reason = "other"
)

// ReasonOf classifies err. A nil err is ReasonOther.
func ReasonOf(err error) Reason {
	var (
		certErr  x509.UnknownAuthorityError
		hostErr  x509.HostnameError
		invalid  x509.CertificateInvalidError
		recErr   tls.RecordHeaderError
		alertErr tls.AlertError
		netErr   net.Error
	)
	msg := ""
	if err != nil {
		msg = strings.ToLower(err.Error())
	}
	switch {
	case err == nil:
		return ReasonOther
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired),
		errors.Is(err, nats.ErrAuthRevoked), errors.Is(err, nats.ErrAccountAuthExpired),
		strings.Contains(msg, "authorization violation"), strings.Contains(msg, "authentication"):
		return ReasonAuthorization
	case errors.Is(err, nats.ErrPermissionViolation), strings.Contains(msg, "permissions violation"):
		return ReasonPermission
	case errors.Is(err, nats.ErrSecureConnRequired), errors.Is(err, nats.ErrSecureConnWanted),
		errors.As(err, &certErr), errors.As(err, &hostErr), errors.As(err, &invalid),
		errors.As(err, &recErr), errors.As(err, &alertErr), strings.Contains(msg, "tls"),
		strings.Contains(msg, "x509"), strings.Contains(msg, "certificate"):
		return ReasonTLS
	case errors.Is(err, nats.ErrConnectionClosed):
		return ReasonClosed
	case errors.Is(err, io.EOF), errors.Is(err, nats.ErrNoServers), errors.Is(err, nats.ErrTimeout),
		errors.Is(err, nats.ErrStaleConnection), errors.As(err, &netErr):
		return ReasonIO
	}
	return ReasonOther
}
