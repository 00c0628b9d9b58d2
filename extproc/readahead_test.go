package extproc_test

import (
	"context"
	"testing"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"github.com/warmroute/warmroute/extproc"
)

// blockedSession runs Process on a stream whose Send blocks until the test
// reads out: the stream sits in its first Send while the test shows what
// the receive goroutine reads ahead.
func blockedSession(t *testing.T, h *harness) (*blockingStream, chan error) {
	ctx, cancel := context.WithCancel(context.Background())
	fs := &blockingStream{fakeStream{ctx: ctx, in: make(chan *extprocv3.ProcessingRequest, 16), out: make(chan *extprocv3.ProcessingResponse)}}
	done := make(chan error, 1)
	go func() { done <- h.srv.Process(fs) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return fs, done
}

// blockingStream's Send waits for the test to read out (or the stream to end).
type blockingStream struct{ fakeStream }

func (b *blockingStream) Send(r *extprocv3.ProcessingResponse) error {
	select {
	case b.out <- r:
		return nil
	case <-b.ctx.Done():
		return b.ctx.Err()
	}
}

// drain reads every further answer until the stream ends.
func (b *blockingStream) drain() {
	go func() {
		for {
			select {
			case <-b.out:
			case <-b.ctx.Done():
				return
			}
		}
	}()
}

func TestReadAheadCountsAgainstTheBudget(t *testing.T) {
	h := newHarness(t, harnessConfig{opts: budgetOpts, defaultPool: "m"})
	fs, _ := blockedSession(t, h)
	fs.in <- first(reqHeaders("/v1/completions", false), duplex, none)
	fs.in <- reqBody(completion("m", "hello"), true)
	h.waitBuffered(32 << 10) // the body's first allocation; the stream now blocks sending the route
	fs.in <- respBody(make([]byte, 50_000), false)
	h.waitBuffered(32<<10 + 50_000)
	<-fs.out // the route is sent: the stream re-emits and drops its body and takes the read-ahead over
	fs.drain()
	h.waitBuffered(0)
}

// TestReadAheadOverTheBudgetIsRefused: stream a holds part of the budget
// (blocked sending its route); a message stream b reads that would take
// more than the rest plus the one-message slack is refused with 503 before
// the stream keeps any of it.
func TestReadAheadOverTheBudgetIsRefused(t *testing.T) {
	h := newHarness(t, harnessConfig{opts: budgetOpts, defaultPool: "m"})
	a, _ := blockedSession(t, h)
	a.in <- first(reqHeaders("/v1/completions", false), duplex, none)
	a.in <- reqBody(completion("m", "hello"), true)
	h.waitBuffered(32 << 10)
	b := h.open()
	rest := budgetOpts.MaxBufferedBytes - 32<<10 + int64(budgetOpts.MaxGRPCMessageBytes())
	b.send(first(reqHeaders("/v1/completions", false), duplex, none), reqBody(make([]byte, rest+1), false))
	if code, _ := immediate(t, b.recv()); code != 503 {
		t.Fatalf("answer to the refused message: %d, want 503", code)
	}
	if err := b.wait(); err != nil {
		t.Fatalf("Process = %v", err)
	}
	if got := h.requestsTotal("overloaded"); got != 1 {
		t.Errorf("requests_total{overloaded} = %v, want 1", got)
	}
	h.waitBuffered(32 << 10) // a's, nothing of b's
	<-a.out
	a.drain()
	h.waitBuffered(0)
}

func TestGRPCWindows(t *testing.T) {
	tests := []struct {
		name       string
		budget     int64
		wantStream int32
		wantConn   int32
	}{
		{"default budget", 0, 256 << 10, 4 << 20},
		{"small budget: the floor", 16 << 20, 256 << 10, 1 << 20},
		{"large budget: the ceiling", 4 << 30, 256 << 10, 16 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := extproc.Config{MaxBufferedBytes: tt.budget}.GRPCWindows()
			if s != tt.wantStream || c != tt.wantConn {
				t.Errorf("GRPCWindows() = %d, %d; want %d, %d", s, c, tt.wantStream, tt.wantConn)
			}
		})
	}
}
