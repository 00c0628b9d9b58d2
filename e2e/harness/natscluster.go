package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// StartNATSCluster starts n natsd processes (BuildNATSD: the real
// nats-server) joined into one cluster by explicit routes, each on its own
// client and route ports, and waits until a message published on the first
// node reaches a subscriber on every other. Each node keeps its
// configuration file, so NATS.Restart brings it back into the cluster.
func StartNATSCluster(ctx context.Context, bin, logDir string, n int) ([]*NATS, error) {
	ports, err := FreePorts(2 * n)
	if err != nil {
		return nil, err
	}
	routes := make([]string, n)
	for i := range n {
		routes[i] = fmt.Sprintf("%q", "nats-route://"+Addr(ports[n+i]))
	}
	var nodes []*NATS
	stop := func() {
		for _, nd := range nodes {
			_ = nd.Stop()
		}
	}
	for i := range n {
		conf := filepath.Join(logDir, fmt.Sprintf("nats-%d.conf", i+1))
		body := fmt.Sprintf("server_name: \"n%d\"\ncluster {\n  name: \"e2e\"\n  listen: %q\n  routes: [%s]\n}\n",
			i+1, Addr(ports[n+i]), strings.Join(routes, ", "))
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			stop()
			return nil, fmt.Errorf("writing nats cluster config: %w", err)
		}
		nd := &NATS{Addr: Addr(ports[i]), ConfigFile: conf, bin: bin, logDir: logDir, name: fmt.Sprintf("nats-%d", i+1)}
		if err := nd.Restart(ctx); err != nil {
			stop()
			return nil, err
		}
		nodes = append(nodes, nd)
	}
	if err := WaitClusterRoutes(ctx, nodes); err != nil {
		stop()
		return nil, err
	}
	return nodes, nil
}

// WaitClusterRoutes waits until a message published on the first running
// node reaches a subscriber on each other running node.
func WaitClusterRoutes(ctx context.Context, nodes []*NATS) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	for _, nd := range nodes[1:] {
		for {
			err := routeCheck(nodes[0].URL(), nd.URL())
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for the nats cluster route %s -> %s: %w", nodes[0].Addr, nd.Addr, err)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

func routeCheck(from, to string) error {
	sub, err := nats.Connect(to, nats.NoReconnect())
	if err != nil {
		return err
	}
	defer sub.Close()
	pub, err := nats.Connect(from, nats.NoReconnect())
	if err != nil {
		return err
	}
	defer pub.Close()
	s, err := sub.SubscribeSync("e2e.route.check")
	if err != nil {
		return err
	}
	if err := sub.Flush(); err != nil {
		return err
	}
	// The subscription may take a moment to reach the other node.
	for range 10 {
		if err := pub.Publish("e2e.route.check", []byte("x")); err != nil {
			return err
		}
		if _, err := s.NextMsg(100 * time.Millisecond); err == nil {
			return nil
		}
	}
	return fmt.Errorf("no message across the route")
}
