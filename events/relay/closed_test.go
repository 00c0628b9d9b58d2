package relay_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/events/bus"
	"github.com/warmroute/warmroute/events/relay"
)

// TestRelayExitsOnRefusedCredentials: a relay whose credentials the server
// refuses exits within seconds with an authorization error, not with a bare
// "connection closed".
func TestRelayExitsOnRefusedCredentials(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte("authorization { user: relay, password: right }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := bus.StartEmbeddedWith(bus.EmbeddedOptions{Host: "127.0.0.1", ConfigFile: conf})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	url := strings.Replace(srv.ClientURL(), "nats://", "nats://relay:wrong@", 1)
	nc, err := bus.ConnectOptions{URL: url, Monitor: bus.NewMonitor(nil, nil)}.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	e := startFakeEngine(t, 16)
	r, err := relay.New(relay.Config{EventsEndpoint: e.eventsURL(), Model: "m", Endpoint: "127.0.0.1:8000"},
		nc, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err = r.Run(ctx)
	if !errors.Is(err, nats.ErrAuthorization) || !strings.Contains(err.Error(), "authorization") {
		t.Fatalf("Run = %v after %s; want an authorization error", err, time.Since(start))
	}
	t.Logf("relay exited after %s: %v", time.Since(start).Round(time.Millisecond), err)
}
