package bus_test

import (
	"testing"

	"github.com/warmroute/warmroute/events/bus"
)

func TestOpenEmbedded(t *testing.T) {
	c, err := bus.Open(bus.Config{Listen: "127.0.0.1:0", JetStream: bus.JetStreamConfig{Enabled: true}}, "test", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.URL() == "" || c.Conn() == nil {
		t.Fatalf("URL %q, conn %v", c.URL(), c.Conn())
	}
	if err := c.Conn().Flush(); err != nil {
		t.Fatalf("flush to the embedded server: %v", err)
	}
	c.Close()
	c.Close() // idempotent
	if !c.Conn().IsClosed() {
		t.Error("connection open after Close")
	}
}

func TestOpenRejects(t *testing.T) {
	tests := []struct {
		name string
		cfg  bus.Config
	}{
		{"bad listen port", bus.Config{Listen: "127.0.0.1:notaport"}},
		{"listen without port", bus.Config{Listen: "127.0.0.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := bus.Open(tt.cfg, "test", nil, nil)
			if err == nil {
				c.Close()
				t.Fatal("Open succeeded")
			}
		})
	}
}
