package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/events/bus"
)

// TestRelayAdminExportsBuildInfo runs the relay subcommand against an
// embedded NATS server and scrapes its admin /metrics.
func TestRelayAdminExportsBuildInfo(t *testing.T) {
	ns, err := bus.StartEmbedded("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"relay", "--model", "m", "--endpoint-addr", "10.0.0.1:8000",
			"--zmq-url", fmt.Sprintf("tcp://127.0.0.1:%d", freePort(t)), "--nats-url", ns.ClientURL(),
			"--admin-addr", admin, "--log-format", "json"}, io.Discard, io.Discard)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("relay: %v", err)
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + admin + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(b), "warmroute_build_info{") {
				t.Errorf("relay /metrics lacks warmroute_build_info:\n%s", b)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("relay admin not up after 10s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freePort returns a loopback port that was free a moment ago, drawn below
// the kernel's ephemeral range so that no outgoing connection of another
// test takes it before the process under test binds it.
func freePort(t *testing.T) int {
	t.Helper()
	ports, err := harness.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return ports[0]
}
