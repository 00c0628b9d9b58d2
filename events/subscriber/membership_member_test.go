package subscriber_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/internal/testwait"
)

// memberSet is a membership that changes under the subscriber, as an
// InferencePool's ready Pods do.
type memberSet struct {
	mu  sync.Mutex
	eps []string
}

func (m *memberSet) set(eps ...string) { m.mu.Lock(); m.eps = eps; m.mu.Unlock() }

func (m *memberSet) has(model, ep string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return model == testModel+"-member" && slices.Contains(m.eps, ep)
}

// TestFollowMemberAdmits: with no configured endpoints, Follow.Member
// admits the relays of current members; a member that leaves is refused and
// its stream is forgotten (blocks cleared, source down), and when it returns
// its heartbeat is a first contact again and its batches are applied.
func TestFollowMemberAdmits(t *testing.T) {
	const model = testModel + "-member"
	const in, out = "192.0.2.1:8000", "192.0.2.2:8000"
	nc := eventstest.Connect(t)
	reg := prometheus.NewRegistry()
	m, err := subscriber.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	set := &memberSet{}
	set.set(in)
	sink, members := &eventstest.Sink{}, &eventstest.Membership{}
	follow := subscriber.Follow{Models: []string{model}, Endpoints: map[string][]string{}, Member: set.has}
	eventstest.StartSubscriber(t, nc, subscriber.Config{}, follow, m, sink, members)
	srcIn, srcOut := subscriber.Source{Model: model, Endpoint: in}, subscriber.Source{Model: model, Endpoint: out}
	unknown := func() int { return int(testutil.ToFloat64(mMessages(t, reg, "unknown_endpoint"))) }

	for _, ep := range []string{in, out} {
		beatModel(t, nc, model, ep)
		publishModel(t, nc, model, ep, ep)
	}
	testwait.Until(t, 10*time.Second, testwait.That("the member applied, the other refused", func() bool {
		return len(sink.Blocks(srcIn)) == 1 && members.Up(srcIn) && unknown() == 2
	}))
	if members.Up(srcOut) || len(sink.Blocks(srcOut)) != 0 {
		t.Fatalf("the non-member is up %v with blocks %v", members.Up(srcOut), sink.Blocks(srcOut))
	}

	set.set() // the member leaves (unready or deleted)
	beatModel(t, nc, model, in)
	testwait.Until(t, 10*time.Second, testwait.That("the departed member forgotten", func() bool {
		return !members.Up(srcIn) && len(sink.Blocks(srcIn)) == 0 && unknown() == 3
	}))
	if got := eventstest.CounterValue(t, reg, "warmroute_events_subscriber_resets_total", "reason", "not_member"); got != 1 {
		t.Fatalf("resets{not_member} = %v, want 1", got)
	}

	set.set(in) // it returns
	beatModel(t, nc, model, in)
	publishModel(t, nc, model, in, in)
	testwait.Until(t, 10*time.Second, testwait.That("the returning member applied again", func() bool {
		return members.Up(srcIn) && len(sink.Blocks(srcIn)) == 1
	}))
}
