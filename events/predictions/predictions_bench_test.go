package predictions_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/warmroute/warmroute/events/eventstest"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/internal/testclock"
)

// BenchmarkCommitShared times a decision's Pick, Commit and Release with
// prediction sharing off and on (publishing to an embedded NATS), so the
// difference is what sharing adds to the request path: one non-blocking
// enqueue. Encoding and publishing run on the share's own goroutine.
func BenchmarkCommitShared(b *testing.B) {
	nc := eventstest.JetStreamConn(b)
	for _, blocks := range []int{16, 256, 4096} {
		for _, share := range []bool{false, true} {
			b.Run(fmt.Sprintf("blocks=%d/share=%t", blocks, share), func(b *testing.B) {
				r := startReplica(b, nc, replicaOptions{name: "bench", clock: testclock.New(time.Now()), local: !share})
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					r.decide(b, (n%1024)*16*blocks, blocks).Release()
					n++
				}
				b.StopTimer()
				r.stop()
				b.ReportMetric(eventstest.PlainCounter(b, r.reg, "warmroute_events_predictions_published_total")/float64(n), "published/op")
			})
		}
	}
}

// BenchmarkPredicted times the request path's part of sharing alone: the
// enqueue, with the publish loop draining to NATS (drops counted when it
// falls behind).
func BenchmarkPredicted(b *testing.B) {
	nc := eventstest.JetStreamConn(b)
	for _, blocks := range []int{16, 4096} {
		b.Run(fmt.Sprintf("blocks=%d", blocks), func(b *testing.B) {
			r := startReplica(b, nc, replicaOptions{name: "bench", clock: testclock.New(time.Now())})
			keys := make([]index.Key, blocks)
			now := time.Now()
			p := index.Prediction{Endpoint: replicaEndpoints[0], Model: testModel, Keys: keys, DecidedAt: now,
				ExpiresAt: now.Add(time.Second)}
			b.ReportAllocs()
			for b.Loop() {
				r.share.Predicted(p)
			}
		})
	}
}
