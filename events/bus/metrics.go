package bus

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/internal/promreg"
)

// Metrics describe one process's NATS connection (a router's or a relay's),
// built by NewMetrics and fed by a Monitor. Labels are the closed set of
// Reason values. Safe for concurrent use.
type Metrics struct {
	connected   prometheus.Gauge
	disconnects *prometheus.CounterVec // reason
	errors      *prometheus.CounterVec // reason
	reconnects  prometheus.Counter

	serverRefusals *prometheus.CounterVec // reason: authentication, permission, tls
}

// NewMetrics creates the connection metrics and registers them on reg (nil:
// not registered). It fails when reg already holds them.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	b := &promreg.Builder{Reg: reg, Namespace: "warmroute", Subsystem: "events"}
	m := &Metrics{
		connected: b.Gauge("nats_connected",
			"1 while the NATS connection is up, 0 while it is down or refused."),
		disconnects: b.CounterVec("nats_disconnects_total",
			"Lost NATS connections, by reason (authorization, permission, tls, io, closed, other).", "reason"),
		errors: b.CounterVec("nats_errors_total",
			"Failed connection attempts and errors the server reported, by reason "+
				"(authorization, permission, tls, io, closed, other).", "reason"),
		reconnects: b.Counter("nats_reconnects_total",
			"Successful reconnections to NATS."),
		serverRefusals: b.CounterVec("nats_server_refusals_total",
			"Clients the embedded NATS server refused, by reason (authentication, permission, tls); "+
				"always 0 without an embedded server.", "reason"),
	}
	if b.Err() != nil {
		return nil, fmt.Errorf("registering nats metrics: %w", b.Err())
	}
	return m, nil
}
