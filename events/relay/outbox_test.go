package relay

import (
	"testing"

	"github.com/nats-io/nats.go"
)

func TestOutboxBoundedWithDropAccounting(t *testing.T) {
	o := newOutbox(2, mustMetrics(t))
	for seq := uint64(1); seq <= 3; seq++ {
		o.push(outboxItem{msg: &nats.Msg{}, seq: seq, batch: true})
	}
	it, drops, ok := o.peek()
	if !ok || it.seq != 2 || drops != 1 || !o.owesReset(drops) {
		t.Fatalf("peek = seq %d drops %d ok %v; want the oldest kept (2) and one drop owed", it.seq, drops, ok)
	}
	o.announced(drops)
	o.pop(it.id)
	if it, drops, _ := o.peek(); it.seq != 3 || o.owesReset(drops) {
		t.Fatalf("after pop: seq %d, reset owed %v", it.seq, o.owesReset(drops))
	}
	o.pop(12345) // a stale id must not remove the head
	if _, _, ok := o.peek(); !ok {
		t.Fatal("pop with a stale id removed the head")
	}
}
