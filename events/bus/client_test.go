package bus_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/internal/testlog"
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

// The embedded server's connection is in-process; the log names the
// server's own address, not nats.go's default URL (which a test on another
// port once showed as "nats://127.0.0.1:4222").
func TestOpenEmbeddedLogsItsAddress(t *testing.T) {
	var logs testlog.Buffer
	c, err := bus.Open(bus.Config{Listen: "127.0.0.1:0"}, "test", nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var connected string
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, `msg="NATS connected"`) {
			connected = line
		}
	}
	if !strings.Contains(connected, "url="+c.URL()+" ") || !strings.Contains(connected, "in_process=true") {
		t.Fatalf("connected line %q does not name the embedded server %s in-process; log:\n%s", connected, c.URL(), logs.String())
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
