package bus_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/bus"
)

// TestShippedAuthorizationExample: the repository's NATS authorization
// example runs as the embedded server's configuration, lets each relay
// publish only its own endpoint's subjects, and lets the router subscribe
// but not publish.
func TestShippedAuthorizationExample(t *testing.T) {
	const model, a, b = "Qwen/Qwen3-8B", "10.0.0.5:8000", "10.0.0.6:8000"
	conf := filepath.Join("..", "..", "examples", "nats", "nats.conf")
	c, err := bus.Open(bus.Config{Listen: "127.0.0.1:0", Server: bus.ServerConfig{Config: conf}}, "test", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sub, err := c.Conn().SubscribeSync("warmroute.>")
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Conn().Flush()
	connect := func(user, pw string) *nats.Conn {
		nc, err := nats.Connect(c.URL(), nats.UserInfo(user, pw))
		if err != nil {
			t.Fatalf("%s: %v", user, err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	relayA, router := connect("relay-a", "relay-a-secret"), connect("router", "router-secret")
	own, _ := api.HeartbeatSubject(model, a)
	ownEvents, _ := api.EventSubject(model, a)
	other, _ := api.HeartbeatSubject(model, b)
	otherEvents, _ := api.EventSubject(model, b)
	for _, subj := range []string{other, otherEvents} {
		_ = relayA.Publish(subj, []byte("forged"))
	}
	_ = router.Publish(own, []byte("forged by a router"))
	_ = router.Flush()
	for _, subj := range []string{own, ownEvents} {
		_ = relayA.Publish(subj, []byte("own"))
	}
	_ = relayA.Flush()
	for _, want := range []string{own, ownEvents} {
		msg, err := sub.NextMsg(2 * time.Second)
		if err != nil || msg.Subject != want || string(msg.Data) != "own" {
			t.Fatalf("got %v, %v; want relay-a's own %s", msg, err, want)
		}
	}
	if msg, err := sub.NextMsg(200 * time.Millisecond); err == nil {
		t.Fatalf("a forbidden publish was delivered: %s %q", msg.Subject, msg.Data)
	}
	rsub, err := router.SubscribeSync("warmroute.kv.v1.>")
	if err != nil {
		t.Fatal(err)
	}
	_ = router.Flush()
	_ = relayA.Publish(ownEvents, []byte("own"))
	if msg, err := rsub.NextMsg(2 * time.Second); err != nil || msg.Subject != ownEvents {
		t.Fatalf("router subscription got %v, %v", msg, err)
	}
	// Snapshots: the relay answers requests for its own endpoint only.
	ownSnap, _ := api.SnapshotWildcard(model, a)
	if _, err := relayA.Subscribe(ownSnap, func(m *nats.Msg) { _ = m.Respond([]byte("chunk")) }); err != nil {
		t.Fatal(err)
	}
	_ = relayA.Flush()
	req, _ := api.SnapshotSubject(model, a, 0)
	if msg, err := router.Request(req, nil, 2*time.Second); err != nil || string(msg.Data) != "chunk" {
		t.Fatalf("snapshot request got %v, %v", msg, err)
	}
}
