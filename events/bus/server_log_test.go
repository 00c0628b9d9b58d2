package bus_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/internal/testpki"
	"github.com/warmroute/warmroute/internal/testwait"
)

// TestEmbeddedCountsRefusals: what the embedded server refuses on its own
// (a wrong password, a forbidden publish, a client without a certificate)
// is counted by reason, and a good client is served afterwards.
func TestEmbeddedCountsRefusals(t *testing.T) {
	ca := testpki.New(t, "nats-ca")
	srvPair := ca.Server("127.0.0.1")
	tlsConf := fmt.Sprintf("tls { cert_file: %q, key_file: %q, ca_file: %q, verify: true }\n",
		srvPair.CertFile, srvPair.KeyFile, ca.CertFile)
	client := ca.Client("relay")
	tests := []struct {
		name   string
		conf   string
		forge  func(url string)
		reason string
		good   []nats.Option
	}{
		{"wrong password", usersConf, func(url string) {
			if nc, err := nats.Connect(url, nats.UserInfo("relay", "wrong")); err == nil {
				nc.Close()
			}
		}, "authentication", []nats.Option{nats.UserInfo("relay", "relaypw")}},
		{"forbidden publish", usersConf, func(url string) {
			nc, err := nats.Connect(url, nats.UserInfo("relay", "relaypw"), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			_ = nc.Publish("warmroute.kv.v1.other.x", []byte("forged"))
			_ = nc.Flush()
		}, "permission", []nats.Option{nats.UserInfo("reader", "readerpw")}},
		{"no client certificate", tlsConf, func(url string) {
			if nc, err := nats.Connect(url, nats.RootCAs(ca.CertFile)); err == nil {
				nc.Close()
			}
		}, "tls", []nats.Option{nats.RootCAs(ca.CertFile), nats.ClientCert(client.CertFile, client.KeyFile)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m, err := bus.NewMetrics(reg)
			if err != nil {
				t.Fatal(err)
			}
			c, err := bus.Open(bus.Config{Listen: "127.0.0.1:0", Server: bus.ServerConfig{Config: writeConf(t, tt.conf)}},
				"test", m, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			tt.forge(c.URL())
			tt.forge(c.URL())
			testwait.Until(t, 10*time.Second, testwait.That("two refusals counted", func() bool {
				return refusals(t, reg, tt.reason) == 2
			}))
			for _, other := range []string{"authentication", "permission", "tls"} {
				if other != tt.reason && refusals(t, reg, other) != 0 {
					t.Errorf("refusals{reason=%s} = %v, want 0", other, refusals(t, reg, other))
				}
			}
			good, err := nats.Connect(c.URL(), tt.good...)
			if err != nil {
				t.Fatalf("good client afterwards: %v", err)
			}
			defer good.Close()
			if err := good.Flush(); err != nil {
				t.Fatalf("good client afterwards: %v", err)
			}
		})
	}
}

func refusals(t *testing.T, reg *prometheus.Registry, reason string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "warmroute_events_nats_server_refusals_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
