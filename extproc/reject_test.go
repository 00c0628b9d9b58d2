package extproc_test

import (
	"context"
	"strings"
	"testing"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/scorer"
)

// requestsTotal reads warmroute_extproc_requests_total{outcome}.
func (h *harness) requestsTotal(outcome string) float64 {
	h.t.Helper()
	return h.counter("warmroute_extproc_requests_total", outcome)
}

// counter reads the counter name{label=value} of a one-label family.
func (h *harness) counter(name, value string) float64 {
	h.t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == value {
				return m.GetCounter().GetValue()
			}
		}
	}
	h.t.Fatalf("no %s{%q}", name, value)
	return 0
}

func TestRejections(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		body    string
		status  int
		outcome string
		param   string
	}{
		{"malformed JSON", "/v1/completions", `{"model":`, 400, "bad_request", ""},
		{"missing model", "/v1/completions", `{"prompt":"p"}`, 400, "bad_request", "model"},
		{"empty prompt", "/v1/completions", `{"model":"m","prompt":""}`, 400, "bad_request", "prompt"},
		{"empty messages", "/v1/chat/completions", `{"model":"m","messages":[]}`, 400, "bad_request", "messages"},
		{"wrong type", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":1}]}`, 400, "bad_request", "messages[0].content"},
		{"unknown model", "/v1/completions", `{"model":"nope","prompt":"p"}`, 404, "unknown_model", ""},
		{"no endpoint", "/v1/completions", `{"model":"empty","prompt":"p"}`, 503, "no_endpoint", ""},
		{"too large", "/v1/completions", `{"model":"m","prompt":"` + strings.Repeat("x", 2000) + `"}`, 413, "too_large", ""},
	}
	for _, mode := range []bodyMode{buffered, duplex} {
		for _, tc := range tests {
			t.Run(mode.String()+"/"+tc.name, func(t *testing.T) {
				h := newHarness(t, harnessConfig{opts: extproc.Options{Config: extproc.Config{MaxBodyBytes: 1024}}})
				s := h.open()
				s.send(first(reqHeaders(tc.path, false), mode, none))
				if mode == buffered {
					s.recv() // CONTINUE
				}
				s.send(reqBody([]byte(tc.body), true))
				code, body := immediate(t, s.recv())
				if code != tc.status {
					t.Errorf("status = %d (%s), want %d", code, body.Error.Message, tc.status)
				}
				if p := body.Error.Param; (p == nil) != (tc.param == "") || p != nil && *p != tc.param {
					t.Errorf("param = %v, want %q", p, tc.param)
				}
				if err := s.wait(); err != nil {
					t.Errorf("Process = %v, want nil after an immediate response", err)
				}
				if got := h.requestsTotal(tc.outcome); got != 1 {
					t.Errorf("requests_total{%s} = %v, want 1", tc.outcome, got)
				}
				if got := h.requestsTotal("routed"); got != 0 {
					t.Errorf("requests_total{routed} = %v, want 0", got)
				}
				if got := h.inflight(); got != 0 {
					t.Errorf("in flight = %d, want 0", got)
				}
			})
		}
	}
}

func TestTooLargeIsAnsweredEarly(t *testing.T) {
	tests := []struct {
		name string
		reqs []*extprocv3.ProcessingRequest
	}{
		{"content-length header", []*extprocv3.ProcessingRequest{
			first(reqHeaders("/v1/completions", false, "content-length", "5000"), buffered, none)}},
		{"duplex accumulation", []*extprocv3.ProcessingRequest{
			first(reqHeaders("/v1/completions", false), duplex, none),
			reqBody(make([]byte, 600), false),
			reqBody(make([]byte, 600), false)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessConfig{opts: extproc.Options{Config: extproc.Config{MaxBodyBytes: 1000}}})
			s := h.open()
			// The body never ends: the 413 must not wait for it.
			s.send(tc.reqs...)
			if code, _ := immediate(t, s.recv()); code != 413 {
				t.Errorf("status = %d, want 413", code)
			}
			if err := s.wait(); err != nil {
				t.Errorf("Process = %v", err)
			}
		})
	}
}

func TestSubsetHint(t *testing.T) {
	list := func(ss ...string) *structpb.Value {
		vs := make([]*structpb.Value, len(ss))
		for i, s := range ss {
			vs[i] = structpb.NewStringValue(s)
		}
		return structpb.NewListValue(&structpb.ListValue{Values: vs})
	}
	tests := []struct {
		name string
		hint *structpb.Value
		want string // "" means 503
	}{
		{"list of one", list(epB), epB},
		{"list with unknown endpoint", list("10.9.9.9:1", epA), epA},
		{"comma-separated string", structpb.NewStringValue(" 10.9.9.9:1 , " + epB), epB},
		{"empty list", list(), ""},
		{"empty string", structpb.NewStringValue(""), ""},
		{"no pool endpoint", list("10.9.9.9:1"), ""},
		{"unreadable type", structpb.NewNumberValue(3), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessConfig{defaultPool: "m"})
			// Several requests, so a hint that were ignored would show up as
			// the other endpoint sooner or later (ties break at random).
			for range 8 {
				s := h.open()
				s.send(withSubset(first(reqHeaders("/v1/completions", true), buffered, none), tc.hint))
				r := s.recv()
				if tc.want == "" {
					if code, _ := immediate(t, r); code != 503 {
						t.Fatalf("status = %d, want 503", code)
					}
					continue
				}
				if dest := routing(t, r, r.GetRequestHeaders().GetResponse()); dest != tc.want {
					t.Fatalf("destination %q, want %q", dest, tc.want)
				}
			}
		})
	}
}

func TestFallbacks(t *testing.T) {
	h := newHarness(t, harnessConfig{fallbacks: 1})
	s := h.open()
	s.send(first(reqHeaders("/v1/completions", false), buffered, none), reqBody(completion("m", "p"), true))
	s.recv()
	r := s.recv()
	dest := routing(t, r, r.GetRequestBody().GetResponse())
	if dest != epA+","+epB && dest != epB+","+epA {
		t.Fatalf("destination %q, want both endpoints in order", dest)
	}
	primary, _, _ := strings.Cut(dest, ",")
	if h.load.InFlight(primary) != 1 || h.inflight() != 1 {
		t.Errorf("load %v: only the primary %s should count", h.load.Snapshot(), primary)
	}
}

// pickerFunc adapts a function to extproc.Picker.
type pickerFunc func(context.Context, *scorer.Request) (*scorer.Decision, error)

func (f pickerFunc) Pick(ctx context.Context, r *scorer.Request) (*scorer.Decision, error) {
	return f(ctx, r)
}

func TestPickerFailuresAreInternalErrors(t *testing.T) {
	tests := []struct {
		name   string
		picker pickerFunc
	}{
		{"panic", func(context.Context, *scorer.Request) (*scorer.Decision, error) { panic("boom") }},
		{"nil decision", func(context.Context, *scorer.Request) (*scorer.Decision, error) { return nil, nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessConfig{picker: tc.picker})
			for range 2 { // the server keeps serving after the failure
				s := h.open()
				s.send(first(reqHeaders("/v1/completions", false), buffered, none), reqBody(completion("m", "p"), true))
				s.recv()
				code, body := immediate(t, s.recv())
				if code != 500 || strings.Contains(body.Error.Message, "boom") {
					t.Errorf("answer = %d %q, want a 500 that hides details", code, body.Error.Message)
				}
				if err := s.wait(); err != nil {
					t.Errorf("Process = %v", err)
				}
			}
			if got := h.requestsTotal("internal"); got != 2 {
				t.Errorf("requests_total{internal} = %v, want 2", got)
			}
		})
	}
}

func TestMetricsExposition(t *testing.T) {
	h := newHarness(t, harnessConfig{defaultPool: "m"})
	s := h.open()
	s.send(first(reqHeaders("/v1/completions", true), buffered, none))
	s.recv()
	if err := s.finish(); err != nil {
		t.Fatal(err)
	}
	s = h.open()
	s.send(first(reqHeaders("/v1/completions", false), buffered, none), reqBody([]byte("{"), true))
	s.recv()
	immediate(t, s.recv())
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP warmroute_extproc_requests_total Requests seen by the ext_proc server, by outcome.
# TYPE warmroute_extproc_requests_total counter
warmroute_extproc_requests_total{outcome="bad_request"} 1
warmroute_extproc_requests_total{outcome="internal"} 0
warmroute_extproc_requests_total{outcome="no_endpoint"} 0
warmroute_extproc_requests_total{outcome="overloaded"} 0
warmroute_extproc_requests_total{outcome="response_not_found"} 0
warmroute_extproc_requests_total{outcome="routed"} 1
warmroute_extproc_requests_total{outcome="shed"} 0
warmroute_extproc_requests_total{outcome="too_large"} 0
warmroute_extproc_requests_total{outcome="unknown_model"} 0
# HELP warmroute_extproc_streams_active Open ext_proc streams.
# TYPE warmroute_extproc_streams_active gauge
warmroute_extproc_streams_active 0
`
	if err := testutil.GatherAndCompare(h.reg, strings.NewReader(want),
		"warmroute_extproc_requests_total", "warmroute_extproc_streams_active"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(h.reg, "warmroute_extproc_decision_duration_seconds"); n != 1 {
		t.Errorf("decision histogram series = %d, want 1", n)
	}
	mfs, _ := h.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "warmroute_extproc_decision_duration_seconds" {
			if c := mf.GetMetric()[0].GetHistogram().GetSampleCount(); c != 2 {
				t.Errorf("decisions observed = %d, want 2", c)
			}
		}
	}
}

func TestNewRejectsBadConfiguration(t *testing.T) {
	p := pickerFunc(func(context.Context, *scorer.Request) (*scorer.Decision, error) { return nil, nil })
	tests := []struct {
		name   string
		picker extproc.Picker
		opts   extproc.Options
	}{
		{"nil picker", nil, extproc.Options{}},
		{"negative max body", p, extproc.Options{Config: extproc.Config{MaxBodyBytes: -1}}},
		{"unknown body mode", p, extproc.Options{DefaultBodyMode: 42}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := extproc.New(tc.picker, tc.opts, nil, nil); err == nil {
				t.Error("New succeeded")
			}
		})
	}
	t.Run("registered twice", func(t *testing.T) {
		h := newHarness(t, harnessConfig{})
		if _, err := extproc.NewMetrics(h.reg); err == nil {
			t.Error("second registration on one registry succeeded")
		}
	})
}

func TestParseBodyMode(t *testing.T) {
	for _, m := range []extproc.BodyMode{extproc.BodyModeBuffered, extproc.BodyModeFullDuplexStreamed, extproc.BodyModeNone} {
		t.Run(m.String(), func(t *testing.T) {
			got, err := extproc.ParseBodyMode(m.String())
			if err != nil || got != m {
				t.Errorf("ParseBodyMode(%q) = %v, %v", m.String(), got, err)
			}
		})
	}
	if _, err := extproc.ParseBodyMode("streamed"); err == nil {
		t.Error("ParseBodyMode accepted an unsupported mode")
	}
}
