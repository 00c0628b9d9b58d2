package extproc

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestGrowBesideOwnReadAhead: a lone 40 KB body under a 64 KiB budget. The
// receive goroutine may already have read ahead (and reserved) the body's
// second part when the stream grows its buffer for the first: the stream
// must not be refused for bytes that are its own. Another stream's bytes
// still count: the same growth is refused when they fill the budget.
func TestGrowBesideOwnReadAhead(t *testing.T) {
	const limit, first, second = 64 << 10, 1000, 39 << 10
	for _, tt := range []struct {
		name             string
		own, others      int64 // bytes read ahead by this stream, held by other streams
		wantGrowAccepted bool
	}{
		{"nothing read ahead", 0, 0, true},
		{"own next part read ahead", second, 0, true},
		{"another stream's bytes", 0, second, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &Server{opts: Options{Config: Config{MaxBodyBytes: limit, MaxBufferedBytes: limit}},
				budget: newBodyBudget(limit, prometheus.NewGauge(prometheus.GaugeOpts{Name: "g"}))}
			st := &stream{srv: s, contentLength: first + second}
			for _, n := range []int64{tt.own, tt.others} {
				if n > 0 && !s.budget.acquireOver(n, limit) {
					t.Fatal("setup: reserving read-ahead bytes failed")
				}
			}
			st.readAhead.Store(tt.own)
			err := st.grow(first)
			if (err == nil) != tt.wantGrowAccepted {
				t.Fatalf("grow(%d) with %d bytes read ahead by the stream and %d held by others: err = %v, want accepted %v",
					first, tt.own, tt.others, err, tt.wantGrowAccepted)
			}
			if err != nil {
				return
			}
			// The read-ahead part is taken over: its reservation returns and
			// the stream grows to the whole body, within the budget.
			s.budget.release(tt.own)
			st.readAhead.Store(0)
			st.body = st.body[:first]
			if err := st.grow(second); err != nil {
				t.Fatalf("growing to the whole body: %v", err)
			}
			if got, want := s.bufferedBytes(), tt.others+int64(first+second); got != want {
				t.Fatalf("buffered %d bytes, want %d", got, want)
			}
		})
	}
}
