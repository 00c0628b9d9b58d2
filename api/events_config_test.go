package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestEventsConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     EventsConfig
		wantErr string // substring; empty means valid
	}{
		{name: "zero is valid", cfg: EventsConfig{}},
		{name: "external with creds", cfg: EventsConfig{URL: "nats://n:4222", CredsFile: "u.creds"}},
		{name: "creds and nkey", cfg: EventsConfig{URL: "nats://n:4222", CredsFile: "a", NKeySeedFile: "b"},
			wantErr: "exclusive"},
		{name: "cert without key", cfg: EventsConfig{URL: "nats://n:4222", TLS: NATSTLSConfig{CertFile: "c"}},
			wantErr: "certFile and keyFile"},
		{name: "creds without url", cfg: EventsConfig{CredsFile: "u.creds"}, wantErr: "set url"},
		{name: "tls without url", cfg: EventsConfig{TLS: NATSTLSConfig{CAFile: "ca"}}, wantErr: "set url"},
		{name: "listen without port", cfg: EventsConfig{Listen: "127.0.0.1"}, wantErr: "events.listen"},
		{name: "negative queue", cfg: EventsConfig{QueueSize: -1}, wantErr: "must not be negative"},
		{name: "negative misses", cfg: EventsConfig{HeartbeatMisses: -1}, wantErr: "must not be negative"},
		{name: "negative max age", cfg: EventsConfig{JetStream: JetStreamConfig{MaxAge: -1}}, wantErr: "must not be negative"},
		{name: "stream with dot", cfg: EventsConfig{JetStream: JetStreamConfig{Stream: "a.b"}}, wantErr: "jetStream.stream"},
		{name: "bad listen", cfg: EventsConfig{Listen: "nope"}, wantErr: "events.listen"},
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

func TestEventsConfigDefaults(t *testing.T) {
	c := EventsConfig{}.WithDefaults()
	if c.Listen != DefaultEventsListen || c.JetStream.Stream != DefaultEventsStream ||
		c.JetStream.MaxAge.D() != DefaultEventsMaxAge || c.QueueSize != DefaultEventsQueueSize ||
		c.HeartbeatMisses != DefaultHeartbeatMisses {
		t.Fatalf("WithDefaults() = %+v", c)
	}
	kept := EventsConfig{Listen: "0.0.0.0:1", QueueSize: 5}.WithDefaults()
	if kept.Listen != "0.0.0.0:1" || kept.QueueSize != 5 {
		t.Fatalf("WithDefaults overwrote set fields: %+v", kept)
	}
}

func TestEventsConfigJSON(t *testing.T) {
	in := `{"events":{"url":"nats://a:4222","jetStream":{"enabled":true,"maxAge":"90s"},"heartbeatMisses":5}}`
	var c struct {
		Events EventsConfig `json:"events"`
	}
	if err := json.Unmarshal([]byte(in), &c); err != nil {
		t.Fatal(err)
	}
	if c.Events.URL != "nats://a:4222" || !c.Events.JetStream.Enabled ||
		c.Events.JetStream.MaxAge.D() != 90*time.Second || c.Events.HeartbeatMisses != 5 {
		t.Fatalf("decoded %+v", c.Events)
	}
}
