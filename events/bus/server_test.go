package bus_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/internal/testwait"
)

// writeConf writes a nats-server configuration file and returns its path.
func writeConf(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const usersConf = `authorization {
  users = [
    {user: relay, password: relaypw, permissions: {publish: ["warmroute.kv.v1.m.>"], subscribe: []}}
    {user: reader, password: readerpw, permissions: {publish: [], subscribe: ["warmroute.>"]}}
  ]
}
`

func TestEmbeddedAuthentication(t *testing.T) {
	tests := []struct {
		name  string
		conf  string
		good  []nats.Option
		bad   []nats.Option
		label string
	}{
		{"users", usersConf, []nats.Option{nats.UserInfo("relay", "relaypw")},
			[]nats.Option{nats.UserInfo("relay", "wrong")}, "password"},
		{"token", "authorization { token: s3cret }\n", []nats.Option{nats.Token("s3cret")},
			[]nats.Option{nats.Token("guess")}, "token"},
		{"single user", "authorization { user: a, password: b }\n", []nats.Option{nats.UserInfo("a", "b")},
			nil, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := bus.Open(bus.Config{Listen: "127.0.0.1:0",
				Server: bus.ServerConfig{Config: writeConf(t, tt.conf)}}, "test", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// The router's own in-process connection is authenticated
			// and may subscribe and publish anything.
			sub, err := c.Conn().SubscribeSync("warmroute.>")
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Conn().Flush(); err != nil {
				t.Fatalf("router connection: %v", err)
			}
			good, err := nats.Connect(c.URL(), tt.good...)
			if err != nil {
				t.Fatalf("good credential refused: %v", err)
			}
			defer good.Close()
			for _, bad := range [][]nats.Option{tt.bad, nil} {
				if bad == nil && tt.bad == nil {
					continue
				}
				if nc, err := nats.Connect(c.URL(), bad...); err == nil {
					nc.Close()
					t.Fatalf("a client with credential %v was accepted", tt.label)
				} else if !errors.Is(err, nats.ErrAuthorization) {
					t.Fatalf("bad credential: %v, want authorization violation", err)
				}
			}
			if nc, err := nats.Connect(c.URL()); err == nil {
				nc.Close()
				t.Fatal("a client without credentials was accepted")
			}
			_ = sub.Unsubscribe()
		})
	}
}

func TestEmbeddedPermissions(t *testing.T) {
	c, err := bus.Open(bus.Config{Listen: "127.0.0.1:0", Server: bus.ServerConfig{Config: writeConf(t, usersConf)}},
		"test", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sub, err := c.Conn().SubscribeSync("warmroute.>")
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Conn().Flush()
	relay, err := nats.Connect(c.URL(), nats.UserInfo("relay", "relaypw"))
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	_ = relay.Publish("warmroute.kv.v1.other.x", []byte("forged"))
	_ = relay.Publish("warmroute.kv.v1.m.x", []byte("allowed"))
	_ = relay.Flush()
	msg, err := sub.NextMsg(2 * time.Second)
	if err != nil || msg.Subject != "warmroute.kv.v1.m.x" {
		t.Fatalf("first message %v, %v; want only the permitted subject", msg, err)
	}
	if msg, err := sub.NextMsg(200 * time.Millisecond); err == nil {
		t.Fatalf("forbidden publish delivered: %s", msg.Subject)
	}
}

func TestEmbeddedListenNeedsAuth(t *testing.T) {
	tests := []struct {
		name   string
		cfg    bus.Config
		refuse bool
	}{
		{"loopback without auth", bus.Config{Listen: "127.0.0.1:0"}, false},
		{"all interfaces without auth", bus.Config{Listen: "0.0.0.0:0"}, true},
		{"empty host without auth", bus.Config{Listen: ":0"}, true},
		{"all interfaces, insecure", bus.Config{Listen: "0.0.0.0:0", Server: bus.ServerConfig{Insecure: true}}, false},
		{"all interfaces with a file without auth", bus.Config{Listen: "0.0.0.0:0",
			Server: bus.ServerConfig{Config: "EMPTY"}}, true},
		{"all interfaces with users", bus.Config{Listen: "0.0.0.0:0", Server: bus.ServerConfig{Config: "USERS"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			switch tt.cfg.Server.Config {
			case "EMPTY":
				tt.cfg.Server.Config = writeConf(t, "max_payload: 1MB\n")
			case "USERS":
				tt.cfg.Server.Config = writeConf(t, usersConf)
			}
			c, err := bus.Open(tt.cfg, "test", nil, nil)
			if err == nil {
				c.Close()
			}
			if got := errors.Is(err, bus.ErrInsecureListen); got != tt.refuse {
				t.Fatalf("Open: %v; want refused %v", err, tt.refuse)
			}
		})
	}
}

// TestMonitorWrongCredential: a refused credential is down, with the
// authorization reason, in the metrics and Down, within a few seconds; the
// connection keeps trying rather than closing.
func TestMonitorWrongCredential(t *testing.T) {
	srv, err := bus.Open(bus.Config{Listen: "127.0.0.1:0", Server: bus.ServerConfig{Config: writeConf(t, usersConf)}},
		"server", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	reg := prometheus.NewRegistry()
	m, err := bus.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	u := "nats://reader:wrong@" + srv.URL()[len("nats://"):]
	start := time.Now()
	c, err := bus.Open(bus.Config{URL: u}, "router", m, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	testwait.Until(t, 5*time.Second, testwait.That("down for authorization", func() bool {
		_, err := c.Down()
		var de *bus.DownError
		return errors.As(err, &de) && de.Reason == bus.ReasonAuthorization
	}))
	t.Logf("authorization reported after %s", time.Since(start))
	if got := gathered(t, reg, "warmroute_events_nats_connected", ""); got != 0 {
		t.Errorf("nats_connected = %v, want 0", got)
	}
	if got := gathered(t, reg, "warmroute_events_nats_errors_total", "authorization"); got < 1 {
		t.Errorf("nats_errors_total{reason=authorization} = %v, want at least 1", got)
	}
	time.Sleep(time.Second) // two refusals in a row would close a default connection
	if c.Conn().IsClosed() {
		t.Fatal("connection closed after refusals; want it to keep trying")
	}
}

// gathered is the value of the metric name in reg, with reason label
// reason ("": the unlabelled series), or -1 when absent.
func gathered(t *testing.T, reg *prometheus.Registry, name, reason string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			got := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					got = l.GetValue()
				}
			}
			if got != reason {
				continue
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return -1
}
