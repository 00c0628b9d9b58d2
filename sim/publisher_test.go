package sim

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warmroute/warmroute/internal/testwait"
)

// recorder is a frameSender that keeps what reached the wire.
type recorder struct {
	mu   sync.Mutex
	seqs []uint64
	ch   chan uint64
}

func (r *recorder) send(seq uint64, _ []byte) error {
	r.mu.Lock()
	r.seqs = append(r.seqs, seq)
	r.mu.Unlock()
	r.ch <- seq
	return nil
}

// startPublisher runs a publisher over a recorder until the test ends.
func startPublisher(t *testing.T, f faults) (*publisher, *recorder) {
	t.Helper()
	m := newEventMetrics()
	rec := &recorder{ch: make(chan uint64, 1000)}
	p := newPublisher(rec, FormatMap, 0, f, newReplayBuffer(100), m, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return p, rec
}

var clearEvent = []kvEvent{{kind: allBlocksCleared}}

// expectSeqs waits for the next len(want) deliveries; the timeout only
// bounds a hang.
func (r *recorder) expectSeqs(t *testing.T, want ...uint64) {
	t.Helper()
	for _, w := range want {
		select {
		case got := <-r.ch:
			if got != w {
				t.Fatalf("delivered seq %d, want %d", got, w)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("seq %d never delivered", w)
		}
	}
}

func TestPublisherDelayKeepsOrder(t *testing.T) {
	p, rec := startPublisher(t, faults{delay: time.Millisecond, jitter: 20 * time.Millisecond})
	for range 50 {
		p.publish(clearEvent)
	}
	want := make([]uint64, 50)
	for i := range want {
		want[i] = uint64(i)
	}
	rec.expectSeqs(t, want...)
}

func TestPublisherDropsMakeGapsButStayReplayable(t *testing.T) {
	p, rec := startPublisher(t, faults{dropRate: 0.5})
	for range 200 {
		p.publish(clearEvent)
	}
	dropped := int(testutil.ToFloat64(p.metrics.batches.WithLabelValues("dropped_injected")))
	delivered := 200 - dropped
	for range delivered {
		<-rec.ch
	}
	waitMetric(t, p.metrics.batches.WithLabelValues("published"), float64(delivered))
	if dropped == 0 || delivered == 0 {
		t.Fatalf("delivered %d dropped %d of 200", delivered, dropped)
	}
	rec.mu.Lock()
	gaps := 0
	for i := 1; i < len(rec.seqs); i++ {
		if rec.seqs[i] <= rec.seqs[i-1] {
			t.Fatalf("seq went %d -> %d", rec.seqs[i-1], rec.seqs[i])
		}
		if rec.seqs[i] > rec.seqs[i-1]+1 {
			gaps++
		}
	}
	rec.mu.Unlock()
	if gaps == 0 {
		t.Fatal("no sequence gap seen")
	}
	if got := len(p.replay.since(0)); got != 100 {
		t.Fatalf("replay holds %d batches, want the last 100", got)
	}
}

func TestPublisherPauseAndRestart(t *testing.T) {
	p, rec := startPublisher(t, faults{})
	p.publish(clearEvent)
	rec.expectSeqs(t, 0)
	p.paused.Store(true)
	p.publish(clearEvent) // seq 1 lost on the wire
	waitMetric(t, p.metrics.batches.WithLabelValues("dropped_paused"), 1)
	p.paused.Store(false)
	p.publish(clearEvent)
	rec.expectSeqs(t, 2)
	if got := p.replay.since(1); len(got) != 2 || got[0].seq != 1 {
		t.Fatalf("replay since 1 = %d batches", len(got))
	}
	p.restart()
	p.publish(clearEvent)
	rec.expectSeqs(t, 0)
	if got := p.replay.since(0); len(got) != 1 {
		t.Fatalf("replay after restart holds %d batches, want 1", len(got))
	}
}

func TestPublisherRestartDropsBatchesInFlight(t *testing.T) {
	p, rec := startPublisher(t, faults{delay: 50 * time.Millisecond})
	p.publish(clearEvent)
	p.restart()
	p.publish(clearEvent)
	rec.expectSeqs(t, 0)
	if got := testutil.ToFloat64(p.metrics.batches.WithLabelValues("dropped_restart")); got != 1 {
		t.Fatalf("dropped_restart = %v, want 1", got)
	}
}

func waitMetric(t *testing.T, c prometheus.Collector, want float64) {
	t.Helper()
	testwait.Until(t, 5*time.Second, func() string {
		if got := testutil.ToFloat64(c); got != want {
			return fmt.Sprintf("counter = %v, want %v", got, want)
		}
		return ""
	})
}
