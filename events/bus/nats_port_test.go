package bus

import (
	"net"
	"strings"
	"testing"
)

func TestStartEmbeddedPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	srv, err := StartEmbeddedWith(EmbeddedOptions{Host: "127.0.0.1", Port: port})
	if err == nil {
		srv.Close()
		t.Fatal("embedded NATS started on a port that is taken")
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("error %q does not say the address is in use", err)
	}
}
