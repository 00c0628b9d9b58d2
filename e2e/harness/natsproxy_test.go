package harness

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/events/bus"
)

func TestNATSProxyFaults(t *testing.T) {
	srv, err := bus.StartEmbeddedWith(bus.EmbeddedOptions{Host: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p, err := StartNATSProxy(srv.ClientURL()[len("nats://"):])
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sub, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	got, err := sub.SubscribeSync("kv.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	pub, err := nats.Connect(p.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	next := func() string {
		t.Helper()
		m, err := got.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return string(m.Data)
	}

	p.DropNext("kv.a", 1)
	msg := nats.NewMsg("kv.a")
	msg.Header.Set("Seq", "1")
	msg.Data = []byte("one\r\nwith a line break")
	if err := pub.PublishMsg(msg); err != nil { // HPUB, dropped
		t.Fatal(err)
	}
	if err := pub.Publish("kv.a", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if s := next(); s != "two" || p.Dropped() != 1 {
		t.Fatalf("after DropNext got %q, %d dropped; want two, 1", s, p.Dropped())
	}

	p.Block(true)
	if err := pub.Publish("kv.b", []byte("held")); err != nil {
		t.Fatal(err)
	}
	_ = pub.FlushTimeout(10 * time.Millisecond) // the PONG cannot come back
	if m, err := got.NextMsg(200 * time.Millisecond); err == nil {
		t.Fatalf("a blocked proxy let %q through", m.Data)
	}
	p.Block(false)
	if s := next(); s != "held" {
		t.Fatalf("after unblocking got %q, want held", s)
	}

	p.Cut()
	deadline := time.Now().Add(5 * time.Second)
	for pub.IsConnected() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if pub.IsConnected() {
		t.Fatal("the client stayed connected through a cut proxy")
	}
	p.Restore()
	deadline = time.Now().Add(10 * time.Second)
	for !pub.IsConnected() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := pub.Publish("kv.c", []byte("after")); err != nil {
		t.Fatal(err)
	}
	if s := next(); s != "after" {
		t.Fatalf("after restoring got %q, want after", s)
	}
}
