package extproc_test

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/scorer"
)

var errBroken = status.Error(codes.Unavailable, "connection reset")

// endings are the ways a routed request's stream can end.
var endings = []struct {
	name     string
	respMode bodyMode
	end      func(s *session) // ends the request
	wantErr  func(error) bool
}{
	{"response headers end of stream", none, func(s *session) {
		s.send(respHeaders(true))
		s.recv()
		s.check0()
		close(s.fs.in)
	}, isNil},
	{"buffered response body", buffered, func(s *session) {
		s.send(respHeaders(false))
		s.recv()
		s.checkInFlight(1)
		s.send(respBody([]byte("{}"), true))
		s.recv()
		s.check0()
		close(s.fs.in)
	}, isNil},
	{"streamed response body", streamed, func(s *session) {
		s.send(respHeaders(false), respBody([]byte("a"), false))
		s.recv()
		s.recv()
		s.checkInFlight(1)
		s.send(respBody(nil, true))
		s.recv()
		s.check0()
		close(s.fs.in)
	}, isNil},
	{"duplex response body", duplex, func(s *session) {
		s.send(respHeaders(false), respBody([]byte("a"), true))
		s.recv()
		s.recv()
		s.check0()
		close(s.fs.in)
	}, isNil},
	{"response trailers", streamed, func(s *session) {
		s.send(respHeaders(false), respBody([]byte("a"), false))
		s.recv()
		s.recv()
		s.send(respTrailers())
		s.recv()
		s.check0()
		close(s.fs.in)
	}, isNil},
	{"envoy closes the stream", none, func(s *session) {
		s.send(respHeaders(false))
		s.recv()
		s.checkInFlight(1)
		close(s.fs.in)
	}, isNil},
	{"stream breaks", none, func(s *session) {
		s.fs.endErr = errBroken
		close(s.fs.in)
	}, func(err error) bool { return errors.Is(err, errBroken) }},
	{"client cancels", none, func(s *session) {
		s.cancel()
	}, func(err error) bool { return isCode(err, codes.Canceled) }},
	{"send fails", none, func(s *session) {
		s.fs.sendErr = errBroken
		s.send(respHeaders(false))
	}, func(err error) bool { return errors.Is(err, errBroken) }},
}

// TestInFlightReturnsToZero routes a request, checks that it counts, ends it
// in every way a stream can end and checks that the count is back to zero.
func TestInFlightReturnsToZero(t *testing.T) {
	for _, mode := range []bodyMode{buffered, duplex} {
		for _, tc := range endings {
			t.Run(mode.String()+"/"+tc.name, func(t *testing.T) {
				h := newHarness(t, harnessConfig{})
				calls := trackCalls(h)
				s := h.open()
				s.h = h
				s.send(first(reqHeaders("/v1/completions", false), mode, tc.respMode),
					reqBody(completion("m", "hello"), true))
				s.recv() // CONTINUE, or the held headers response in duplex mode
				s.recv() // the routing body response, or the single body chunk
				s.checkInFlight(1)
				tc.end(s)
				if err := s.wait(); !tc.wantErr(err) {
					t.Errorf("Process = %v", err)
				}
				s.check0()
				checkDoneLast(t, calls())
			})
		}
	}
}

func isNil(err error) bool { return err == nil }

func (s *session) checkInFlight(want int64) {
	s.t.Helper()
	if got := s.h.inflight(); got != want {
		s.t.Fatalf("in flight = %d, want %d", got, want)
	}
}

func (s *session) check0() { s.t.Helper(); s.checkInFlight(0) }

func TestFailedRoutingSendReleases(t *testing.T) {
	for _, mode := range []bodyMode{buffered, duplex} {
		t.Run(mode.String(), func(t *testing.T) {
			h := newHarness(t, harnessConfig{})
			calls := trackCalls(h)
			s := h.open()
			s.send(first(reqHeaders("/v1/completions", false), mode, none))
			if mode == buffered {
				s.recv()
			}
			s.fs.sendErr = errBroken
			s.send(reqBody(completion("m", "hello"), true))
			if err := s.wait(); !errors.Is(err, errBroken) {
				t.Errorf("Process = %v, want the send error", err)
			}
			if got := h.inflight(); got != 0 {
				t.Errorf("in flight = %d, want 0", got)
			}
			checkDoneLast(t, calls())
		})
	}
}

// trackCalls records the lifecycle calls h's streams make on their
// decisions and returns a function reading them.
func trackCalls(h *harness) func() []string {
	var mu sync.Mutex
	var calls []string
	extproc.TrackDecisions(h.srv, func(d *scorer.Decision) extproc.Lifecycle {
		return recorder{d: d, mu: &mu, calls: &calls}
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(calls)
	}
}

// checkDoneLast checks that one decision's calls end with exactly one Done:
// every way a stream ends hands its decision back, and nothing follows.
func checkDoneLast(t *testing.T, calls []string) {
	t.Helper()
	if n := len(calls); n == 0 || calls[n-1] != "done" || slices.Index(calls, "done") != n-1 {
		t.Errorf("lifecycle calls %v, want them to end with one done", calls)
	}
}
