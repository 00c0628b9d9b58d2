// Command natsd runs a NATS server (the real nats-server, embedded as a
// library through the events package) as its own process, so end-to-end
// tests can kill and restart NATS independently of the router and relays.
// It listens on loopback only and stops on SIGTERM or SIGINT.
//
//	natsd -addr 127.0.0.1:4222 [-jetstream-dir DIR] [-config nats.conf]
//
// With -config it takes the file's authorization and tls blocks, as the
// router's embedded server does with events.server.config.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/warmroute/warmroute/events/bus"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "natsd:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("natsd", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:4222", "client listen address")
	jsDir := fs.String("jetstream-dir", "", "enable JetStream with file storage in this directory")
	conf := fs.String("config", "", "nats-server configuration file (authorization, tls)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	host, portText, err := net.SplitHostPort(*addr)
	if err != nil {
		return fmt.Errorf("parsing -addr: %w", err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return fmt.Errorf("parsing -addr port: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := bus.StartEmbeddedWith(bus.EmbeddedOptions{Host: host, Port: port, JetStreamDir: *jsDir,
		ConfigFile: *conf})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "natsd listening on %s (jetstream %q)\n", srv.ClientURL(), *jsDir)
	<-ctx.Done()
	srv.Close()
	return nil
}
