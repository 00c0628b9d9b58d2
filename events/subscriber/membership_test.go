package subscriber_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/internal/testwait"
)

// TestTrustedMembership: heartbeats and batches speak only for the
// endpoints the mode admits; the rest are dropped and counted, and reach
// neither the sink nor the membership.
func TestTrustedMembership(t *testing.T) {
	const known, stranger, inCIDR = "10.2.0.1:8000", "10.9.0.1:8000", "10.3.0.7:8000"
	tests := []struct {
		name    string
		members []string
		admit   map[string]bool
	}{
		{"static", nil, map[string]bool{known: true, stranger: false, inCIDR: false}},
		{"heartbeat from anywhere", subscriber.AnyEndpoint, map[string]bool{known: true, stranger: true, inCIDR: true}},
		{"heartbeat within a prefix", []string{"10.3.0.0/16"}, map[string]bool{known: true, stranger: false, inCIDR: true}},
	}
	nc := eventstest.Connect(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := testModel + strconv.Itoa(i) // one subject space per case
			reg := prometheus.NewRegistry()
			m, err := subscriber.NewMetrics(reg)
			if err != nil {
				t.Fatal(err)
			}
			sink, members := &eventstest.Sink{}, &eventstest.Membership{}
			follow := subscriber.Follow{Models: []string{model}, Endpoints: map[string][]string{model: {known}}}
			eventstest.StartSubscriber(t, nc, subscriber.Config{HeartbeatMembership: tt.members}, follow, m, sink, members)
			rejected := 0
			for ep, ok := range tt.admit {
				beatModel(t, nc, model, ep)
				publishModel(t, nc, model, ep, ep)
				if !ok {
					rejected += 2
				}
			}
			unknown := func() float64 { return testutil.ToFloat64(mMessages(t, reg, "unknown_endpoint")) }
			testwait.Until(t, 10*time.Second, testwait.That("every message handled", func() bool {
				b, _ := sink.Counts()
				up := 0
				for ep := range tt.admit {
					if members.Up(subscriber.Source{Model: model, Endpoint: ep}) {
						up++
					}
				}
				return b == len(tt.admit)-rejected/2 && up == b && int(unknown()) == rejected
			}))
			for ep, ok := range tt.admit {
				src := subscriber.Source{Model: model, Endpoint: ep}
				if members.Up(src) != ok || (len(sink.Blocks(src)) == 1) != ok {
					t.Errorf("%s: up %v, blocks %v; want admitted %v", ep, members.Up(src), sink.Blocks(src), ok)
				}
			}
		})
	}
}

// TestClaimedEndpointMismatch: a batch whose endpoint header, or a
// heartbeat whose body, names another endpoint than its subject is dropped
// and counted as a mismatch.
func TestClaimedEndpointMismatch(t *testing.T) {
	const ep, other = "10.4.0.1:8000", "10.4.0.2:8000"
	nc := eventstest.Connect(t)
	reg := prometheus.NewRegistry()
	m, err := subscriber.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	sink, members := &eventstest.Sink{}, &eventstest.Membership{}
	model := testModel + "mm"
	follow := subscriber.Follow{Models: []string{model}, Endpoints: map[string][]string{model: {ep, other}}}
	eventstest.StartSubscriber(t, nc, subscriber.Config{}, follow, m, sink, members)
	publishModel(t, nc, model, ep, other) // header claims another endpoint
	subj, _ := api.HeartbeatSubject(model, ep)
	body := heartbeatBody(model, other)
	if err := nc.Publish(subj, body); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, testwait.That("two mismatches", func() bool {
		return testutil.ToFloat64(mMessages(t, reg, "mismatch")) == 2
	}))
	if b, _ := sink.Counts(); b != 0 || members.Up(subscriber.Source{Model: model, Endpoint: ep}) ||
		members.Up(subscriber.Source{Model: model, Endpoint: other}) {
		t.Fatalf("a mismatched message took effect: %d batches, events %v", b, members.Events())
	}
}

func beatModel(t *testing.T, nc *nats.Conn, model, endpoint string) {
	t.Helper()
	subj, _ := api.HeartbeatSubject(model, endpoint)
	if err := nc.Publish(subj, heartbeatBody(model, endpoint)); err != nil {
		t.Fatal(err)
	}
}

func heartbeatBody(model, endpoint string) []byte {
	body, _ := jsonHeartbeat(api.Heartbeat{Endpoint: endpoint, Model: model, Relay: "r", EngineConnected: true,
		Interval: api.Duration(time.Hour), SentAt: time.Now()})
	return body
}

// publishModel publishes one batch on endpoint's subject whose endpoint
// header says claimed.
func publishModel(t *testing.T, nc *nats.Conn, model, endpoint, claimed string) {
	t.Helper()
	subj, _ := api.EventSubject(model, endpoint)
	h := nats.Header{api.EventKindHeader: {api.EventKindBatch}, api.EventSeqHeader: {"1"},
		api.EventDPRankHeader: {"0"}, api.EventRelayHeader: {"r"}, api.EventEndpointHeader: {claimed}}
	if err := nc.PublishMsg(&nats.Msg{Subject: subj, Header: h, Data: batchPayload("BlockStored", 7)}); err != nil {
		t.Fatal(err)
	}
}

// mMessages is subscriber_messages_total{result} in reg.
func mMessages(t *testing.T, reg *prometheus.Registry, result string) prometheus.Collector {
	t.Helper()
	return gaugeOf(t, reg, "warmroute_events_subscriber_messages_total", "result", result)
}

// gaugeOf wraps the current value of one series of reg as a collector
// testutil.ToFloat64 can read (0 when absent).
func gaugeOf(t *testing.T, reg *prometheus.Registry, name, label, value string) prometheus.Collector {
	t.Helper()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "probe"})
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					g.Set(mt.GetCounter().GetValue())
				}
			}
		}
	}
	return g
}
