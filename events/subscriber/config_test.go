package subscriber_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/predictions"
	"github.com/warmroute/warmroute/events/subscriber"
)

// events builds a Config from its bus part and the rest.
func events(b bus.Config, c subscriber.Config) subscriber.Config {
	c.Config = b
	return c
}

func TestConfigValidate(t *testing.T) {
	ext := "nats://n:4222"
	tests := []struct {
		name    string
		cfg     subscriber.Config
		wantErr string // substring; empty means valid
	}{
		{name: "zero is valid", cfg: subscriber.Config{}},
		{name: "external with creds", cfg: events(bus.Config{URL: ext, CredsFile: "u.creds"}, subscriber.Config{})},
		{name: "creds and nkey", cfg: events(bus.Config{URL: ext, CredsFile: "a", NKeySeedFile: "b"}, subscriber.Config{}),
			wantErr: "exclusive"},
		{name: "cert without key", cfg: events(bus.Config{URL: ext, TLS: bus.TLSConfig{CertFile: "c"}}, subscriber.Config{}),
			wantErr: "certFile and keyFile"},
		{name: "creds without url", cfg: events(bus.Config{CredsFile: "u.creds"}, subscriber.Config{}), wantErr: "set url"},
		{name: "tls without url", cfg: events(bus.Config{TLS: bus.TLSConfig{CAFile: "ca"}}, subscriber.Config{}),
			wantErr: "set url"},
		{name: "listen without port", cfg: events(bus.Config{Listen: "127.0.0.1"}, subscriber.Config{}),
			wantErr: "events.listen"},
		{name: "listen beyond loopback without auth", cfg: events(bus.Config{Listen: "0.0.0.0:4222"}, subscriber.Config{}),
			wantErr: "needs authentication"},
		{name: "listen beyond loopback, insecure", cfg: events(bus.Config{Listen: ":4222",
			Server: bus.ServerConfig{Insecure: true}}, subscriber.Config{})},
		{name: "listen beyond loopback with a server config", cfg: events(bus.Config{Listen: "0.0.0.0:4222",
			Server: bus.ServerConfig{Config: "nats.conf"}}, subscriber.Config{})},
		{name: "server settings with url", cfg: events(bus.Config{URL: ext, Server: bus.ServerConfig{Insecure: true}},
			subscriber.Config{}), wantErr: "embedded server"},
		{name: "negative unreadyAfter", cfg: events(bus.Config{UnreadyAfter: -1}, subscriber.Config{}),
			wantErr: "must not be negative"},
		{name: "heartbeat membership prefixes", cfg: subscriber.Config{HeartbeatMembership: []string{"10.0.0.0/8", "::/0"}}},
		{name: "bad heartbeat membership prefix", cfg: subscriber.Config{HeartbeatMembership: []string{"10.0.0.1"}},
			wantErr: "events.heartbeatMembership"},
		{name: "negative queue", cfg: subscriber.Config{QueueSize: -1}, wantErr: "must not be negative"},
		{name: "negative misses", cfg: subscriber.Config{HeartbeatMisses: -1}, wantErr: "must not be negative"},
		{name: "negative max age", cfg: events(bus.Config{JetStream: bus.JetStreamConfig{MaxAge: -1}}, subscriber.Config{}),
			wantErr: "must not be negative"},
		{name: "stream with dot", cfg: events(bus.Config{JetStream: bus.JetStreamConfig{Stream: "a.b"}}, subscriber.Config{}),
			wantErr: "jetStream.stream"},
		{name: "predictions checked too", cfg: subscriber.Config{Predictions: predictions.Config{QueueSize: -1}},
			wantErr: "predictions.queueSize"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c := subscriber.Config{}.WithDefaults()
	if c.Listen != bus.DefaultListen || c.JetStream.Stream != bus.DefaultStream ||
		c.JetStream.MaxAge.D() != bus.DefaultMaxAge || c.QueueSize != subscriber.DefaultQueueSize ||
		c.HeartbeatMisses != subscriber.DefaultHeartbeatMisses || c.Predictions.QueueSize != predictions.DefaultQueueSize {
		t.Fatalf("WithDefaults() = %+v", c)
	}
	kept := subscriber.Config{Config: bus.Config{Listen: "0.0.0.0:1"}, QueueSize: 5}.WithDefaults()
	if kept.Listen != "0.0.0.0:1" || kept.QueueSize != 5 {
		t.Fatalf("WithDefaults overwrote set fields: %+v", kept)
	}
}

// TestConfigJSON: the bus settings sit inline in the events section, the
// prediction share's under predictions, as in serve's configuration file.
func TestConfigJSON(t *testing.T) {
	in := `{"url":"nats://a:4222","jetStream":{"enabled":true,"maxAge":"90s"},"heartbeatMisses":5,` +
		`"predictions":{"share":true}}`
	var c subscriber.Config
	dec := json.NewDecoder(strings.NewReader(in))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.URL != "nats://a:4222" || !c.JetStream.Enabled || c.JetStream.MaxAge.D() != 90*time.Second ||
		c.HeartbeatMisses != 5 || !c.Predictions.Share {
		t.Fatalf("decoded %+v", c)
	}
	for _, internal := range []string{`{"queueSize":7}`, `{"jetStream":{"stream":"S"}}`, `{"predictions":{"stream":"P"}}`} {
		dec := json.NewDecoder(strings.NewReader(internal))
		dec.DisallowUnknownFields()
		if err := dec.Decode(new(subscriber.Config)); err == nil {
			t.Errorf("%s decoded: queue sizes and stream names are not file settings", internal)
		}
	}
}
