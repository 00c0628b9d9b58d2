package bus

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// serverLog is the embedded server's logger. The server refuses bad
// credentials, permission violations and failed TLS handshakes on its own
// (the refused client never reaches warmroute's code), and the log line is
// the only place it reports them, so serverLog counts them by reason in
// warmroute_events_nats_server_refusals_total and logs the server's line at
// debug. Everything else the server says is logged at debug too (errors at
// warn): the embedded server's chatter is not the router's.
//
// The server calls it from many goroutines; it is safe for concurrent use.
type serverLog struct {
	m   *Metrics
	log *slog.Logger
}

// Refusal reasons, the closed label set of nats_server_refusals_total.
const (
	refusedAuthentication = "authentication" // wrong or missing user, password, token, NKey
	refusedPermission     = "permission"     // publish or subscribe outside the user's permissions
	refusedTLS            = "tls"            // handshake failed: no or untrusted client certificate, protocol
)

// refusalReason classifies one server error line; "" when it is no refusal.
// The texts are nats-server's (client.go: authViolation,
// pubPermissionViolation, subPermissionViolation, the TLS handshake).
func refusalReason(line string) string {
	switch {
	case strings.Contains(line, "authentication error"):
		return refusedAuthentication
	case strings.Contains(line, "Publish Violation"), strings.Contains(line, "Subscription Violation"):
		return refusedPermission
	case strings.Contains(line, "TLS handshake error"):
		return refusedTLS
	}
	return ""
}

func (l serverLog) Errorf(format string, v ...any) {
	line := fmt.Sprintf(format, v...)
	if reason := refusalReason(line); reason != "" {
		l.m.serverRefusals.WithLabelValues(reason).Inc()
		l.log.Debug("embedded NATS refused a client", "reason", reason, "server", line)
		return
	}
	l.log.Warn("embedded NATS: " + line)
}

func (l serverLog) Fatalf(format string, v ...any) {
	l.log.Error("embedded NATS: " + fmt.Sprintf(format, v...))
}

func (l serverLog) Warnf(format string, v ...any)   { l.debug(format, v) }
func (l serverLog) Noticef(format string, v ...any) { l.debug(format, v) }
func (l serverLog) Debugf(format string, v ...any)  { l.debug(format, v) }
func (l serverLog) Tracef(format string, v ...any)  { l.debug(format, v) }

func (l serverLog) debug(format string, v []any) {
	if l.log.Enabled(context.Background(), slog.LevelDebug) {
		l.log.Debug("embedded NATS: " + fmt.Sprintf(format, v...))
	}
}
