package extproc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/internal/testwait"
	"github.com/warmroute/warmroute/scorer"
)

// budgetOpts allows 64 KiB bodies and 64 KiB buffered across streams: two
// streams that sent their first byte (32 KiB each) fill it.
var budgetOpts = extproc.Options{Config: extproc.Config{MaxBodyBytes: 64 << 10, MaxBufferedBytes: 64 << 10}}

func (h *harness) waitBuffered(want int64) {
	h.t.Helper()
	testwait.Until(h.t, 10*time.Second, func() string {
		if got := extproc.BufferedBytes(h.srv); got != want {
			return "buffered bytes = " + itoa(int(got)) + ", want " + itoa(int(want))
		}
		return ""
	})
}

// trickle opens a duplex stream that announces length bytes and sends one.
func (h *harness) trickle(length int) *session {
	s := h.open()
	s.send(first(reqHeaders("/v1/completions", false, "content-length", itoa(length)), duplex, none), reqBody([]byte("{"), false))
	return s
}

func TestAnnouncedLengthIsNotPreallocated(t *testing.T) {
	tests := []struct {
		name   string
		length int
		want   int64
	}{
		{"small body: exactly its length", 100, 100},
		{"large body: the initial cap", 60 << 10, 32 << 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessConfig{opts: budgetOpts})
			s := h.open()
			s.send(first(reqHeaders("/v1/completions", false, "content-length", itoa(tc.length)), duplex, none))
			s.send(reqBody([]byte("{"), false))
			h.waitBuffered(tc.want)
			s.cancel()
			h.waitBuffered(0)
		})
	}
}

func TestBudgetRejectsNewBodiesAndRecovers(t *testing.T) {
	h := newHarness(t, harnessConfig{opts: budgetOpts, defaultPool: "m"})
	a, _ := h.trickle(60<<10), h.trickle(60<<10)
	h.waitBuffered(64 << 10)
	for _, mode := range []bodyMode{duplex, buffered} {
		t.Run(mode.String(), func(t *testing.T) {
			s := h.open()
			s.send(first(reqHeaders("/v1/completions", false), mode, none))
			if mode == buffered {
				s.recv() // CONTINUE
			}
			s.send(reqBody(completion("m", "hello"), true))
			r := s.recv()
			if v, ok := headerIn(r.GetImmediateResponse().GetHeaders(), "retry-after"); !ok || v != "1" {
				t.Errorf("retry-after = %q (present %v), want 1", v, ok)
			}
			code, body := immediate(t, r)
			if code != 503 || body.Error.Type != "service_unavailable" || !strings.Contains(body.Error.Message, "budget") {
				t.Errorf("answer = %d %+v, want 503 service_unavailable naming the budget", code, body.Error)
			}
		})
	}
	if got := h.requestsTotal("overloaded"); got != 2 {
		t.Errorf("requests_total{overloaded} = %v, want 2", got)
	}
	a.cancel() // a cancelled client returns its bytes
	h.waitBuffered(32 << 10)
	s := h.open()
	s.send(first(reqHeaders("/v1/completions", false), duplex, none), reqBody(completion("m", "hello"), true))
	if _, ok := headerIn(s.recv().GetRequestHeaders().GetResponse().GetHeaderMutation(), "x-gateway-destination-endpoint"); !ok {
		t.Error("a body within the budget was not routed")
	}
	if got := h.requestsTotal("routed"); got != 1 {
		t.Errorf("requests_total{routed} = %v, want 1", got)
	}
}

func TestRoutedBodyIsReturnedBeforeTheResponse(t *testing.T) {
	h := newHarness(t, harnessConfig{opts: budgetOpts, defaultPool: "m"})
	s := h.open()
	body := completion("m", strings.Repeat("word ", 8000)) // 40 KB: grows once
	s.send(first(reqHeaders("/v1/completions", false, "content-length", itoa(len(body))), duplex, none),
		reqBody(body[:1000], false), reqBody(body[1000:], true))
	for range 1 + (len(body)+61_999)/62_000 {
		s.recv()
	}
	// The stream stays open for the response; it holds no request bytes.
	h.waitBuffered(0)
	s.send(respHeaders(true))
	s.recv()
	if err := s.finish(); err != nil {
		t.Fatal(err)
	}
}

func TestBufferedBudgetConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  extproc.Config
		ok   bool
	}{
		{"defaults", extproc.Config{}, true},
		{"budget of one body", extproc.Config{MaxBodyBytes: 1 << 20, MaxBufferedBytes: 1 << 20}, true},
		{"budget below one body", extproc.Config{MaxBodyBytes: 2 << 20, MaxBufferedBytes: 1 << 20}, false},
		{"budget below the default body", extproc.Config{MaxBufferedBytes: 1 << 20}, false},
		{"negative budget", extproc.Config{MaxBufferedBytes: -1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// saturatedGauges reports every endpoint with a deep engine queue.
type saturatedGauges struct{}

func (saturatedGauges) EngineLoad(string) (running, waiting, kv float64, ok bool) {
	return 8, 12, 0.95, true
}

// TestShedAnswers429: when the scorer sheds (every candidate saturated), the
// client gets 429 rate_limit_error with retry-after, counted as shed.
func TestShedAnswers429(t *testing.T) {
	p := scorer.New(scorer.NewPools(testPools, ""), &scorer.Load{}, scorer.Options{
		EngineLoad: saturatedGauges{}, Scoring: scorer.ScoringConfig{ShedWaiting: 10}})
	h := newHarness(t, harnessConfig{picker: p})
	s := h.open()
	s.send(first(reqHeaders("/v1/completions", false), buffered, none), reqBody(completion("m", "hello"), true))
	s.recv() // CONTINUE
	r := s.recv()
	if v, ok := headerIn(r.GetImmediateResponse().GetHeaders(), "retry-after"); !ok || v != "1" {
		t.Errorf("retry-after = %q (present %v), want 1", v, ok)
	}
	code, body := immediate(t, r)
	if code != 429 || body.Error.Type != "rate_limit_error" || !strings.Contains(body.Error.Message, "saturated") {
		t.Errorf("answer = %d %+v, want 429 rate_limit_error naming saturation", code, body.Error)
	}
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
	if got := h.requestsTotal("shed"); got != 1 {
		t.Errorf("requests_total{shed} = %v, want 1", got)
	}
	if got := h.requestsTotal("routed"); got != 0 {
		t.Errorf("requests_total{routed} = %v, want 0", got)
	}
}
