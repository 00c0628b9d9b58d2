package extproc_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	filterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/extproc"
)

func TestBufferedRouting(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	s := h.open()
	s.send(first(reqHeaders("/v1/completions", false), buffered, buffered))
	hr := s.recv()
	if c := hr.GetRequestHeaders().GetResponse(); hr.GetRequestHeaders() == nil || c.GetHeaderMutation() != nil {
		t.Fatalf("request headers answer = %v, want a plain CONTINUE", hr)
	}

	s.send(reqBody(completion("m", "hello"), true))
	br := s.recv()
	c := br.GetRequestBody().GetResponse()
	if c.GetStatus() != extprocv3.CommonResponse_CONTINUE || c.GetBodyMutation() != nil {
		t.Errorf("body answer must continue without touching the body: %v", br)
	}
	dest := routing(t, br, c)
	if dest != epA && dest != epB {
		t.Fatalf("destination %q is not in pool m", dest)
	}
	reason, ok := headerIn(c.GetHeaderMutation(), api.DecisionHeader)
	if !ok || reason == "" {
		t.Errorf("no decision header on the request")
	}
	if got := h.load.InFlight(dest); got != 1 {
		t.Errorf("in flight on %s = %d after routing, want 1", dest, got)
	}

	s.send(respHeaders(false))
	rh := s.recv().GetResponseHeaders().GetResponse()
	if got, ok := headerIn(rh.GetHeaderMutation(), api.DecisionHeader); ok {
		t.Errorf("response carries the decision header %q by default; it must go upstream only", got)
	}
	s.send(respBody([]byte(`{"choices":[]}`), true))
	if rb := s.recv().GetResponseBody(); rb == nil || rb.GetResponse().GetBodyMutation() != nil {
		t.Errorf("response body answer = %v, want a plain CONTINUE", rb)
	}
	if got := h.inflight(); got != 0 {
		t.Errorf("in flight = %d after the response ended, want 0", got)
	}
	if err := s.finish(); err != nil {
		t.Errorf("Process = %v", err)
	}
}

// TestDecisionHeaderModes checks where each mode puts x-warmroute-decision:
// the request to the engine, the client's response, both or neither.
func TestDecisionHeaderModes(t *testing.T) {
	for _, tc := range []struct {
		mode                  extproc.DecisionHeaderMode
		onRequest, onResponse bool
	}{
		{"", true, false},
		{extproc.DecisionHeaderUpstream, true, false},
		{extproc.DecisionHeaderClient, true, true},
		{extproc.DecisionHeaderOff, false, false},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			h := newHarness(t, harnessConfig{opts: extproc.Options{Config: extproc.Config{DecisionHeader: tc.mode}}})
			s := h.open()
			s.send(first(reqHeaders("/v1/completions", false), buffered, buffered))
			s.recv()
			s.send(reqBody(completion("m", "hello"), true))
			c := s.recv().GetRequestBody().GetResponse()
			reason, ok := headerIn(c.GetHeaderMutation(), api.DecisionHeader)
			if ok != tc.onRequest {
				t.Errorf("decision header on the request: %t (%q), want %t", ok, reason, tc.onRequest)
			}
			s.send(respHeaders(false))
			rh := s.recv().GetResponseHeaders().GetResponse()
			got, ok := headerIn(rh.GetHeaderMutation(), api.DecisionHeader)
			if ok != tc.onResponse || ok && got != reason {
				t.Errorf("decision header on the response: %t (%q), want %t (%q)", ok, got, tc.onResponse, reason)
			}
			s.send(respBody([]byte(`{"choices":[]}`), true))
			s.recv()
			if err := s.finish(); err != nil {
				t.Errorf("Process = %v", err)
			}
		})
	}
}

func TestDecisionHeaderModeValidate(t *testing.T) {
	for _, tc := range []struct {
		mode extproc.DecisionHeaderMode
		ok   bool
	}{{"", true}, {"upstream", true}, {"client", true}, {"off", true}, {"both", false}, {"Client", false}} {
		err := extproc.Config{DecisionHeader: tc.mode}.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("Validate(%q) = %v, want ok %t", tc.mode, err, tc.ok)
		}
	}
}

// duplexBody is a completion request of exactly n bytes.
func duplexBody(n int) []byte {
	head, tail := `{"model":"m","prompt":"`, `"}`
	return []byte(head + strings.Repeat("x", n-len(head)-len(tail)) + tail)
}

// readChunks reads streamed request body answers until one ends the stream
// (or, with trailers, until the trailers answer) and returns the bytes.
func readChunks(t *testing.T, s *session, trailers bool) []byte {
	t.Helper()
	var got []byte
	for {
		r := s.recv()
		if trailers && r.GetRequestTrailers() != nil {
			return got
		}
		sr := r.GetRequestBody().GetResponse().GetBodyMutation().GetStreamedResponse()
		if sr == nil {
			t.Fatalf("want a streamed body chunk, got %v", r)
		}
		if len(sr.GetBody()) > 62_000 {
			t.Fatalf("chunk of %d bytes exceeds 62,000", len(sr.GetBody()))
		}
		got = append(got, sr.GetBody()...)
		if sr.GetEndOfStream() {
			if trailers {
				t.Fatal("end_of_stream set on the body although trailers follow")
			}
			return got
		}
	}
}

func TestFullDuplexRouting(t *testing.T) {
	tests := []struct {
		name     string
		size     int
		chunk    int
		trailers bool
	}{
		{"2 MiB in 100 KB chunks", 2 << 20, 100_000, false},
		{"exact chunk multiple", 3 * 62_000, 50_000, false},
		{"small single chunk", 64, 64, false},
		{"body ended by trailers", 200_000, 30_000, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessConfig{})
			s := h.open()
			body := duplexBody(tc.size)
			s.send(first(reqHeaders("/v1/completions", false, "content-length", itoa(len(body))), duplex, duplex))
			for off := 0; off < len(body); off += tc.chunk {
				end := min(off+tc.chunk, len(body))
				s.send(reqBody(body[off:end], end == len(body) && !tc.trailers))
			}
			if tc.trailers {
				s.send(reqTrailers())
			}
			// Answers are ordered, so the first one proves nothing was sent
			// before the body was complete.
			hr := s.recv()
			c := hr.GetRequestHeaders().GetResponse()
			if hr.GetRequestHeaders() == nil {
				t.Fatalf("first answer = %v, want the held headers response", hr)
			}
			if c.GetStatus() != extprocv3.CommonResponse_CONTINUE {
				t.Errorf("status %v: CONTINUE_AND_REPLACE would make Envoy drop the streamed body", c.GetStatus())
			}
			dest := routing(t, hr, c)
			if cl, _ := headerIn(c.GetHeaderMutation(), "content-length"); cl != itoa(len(body)) {
				t.Errorf("content-length = %q, want %d", cl, len(body))
			}
			if got := readChunks(t, s, tc.trailers); !bytes.Equal(got, body) {
				t.Fatalf("re-emitted body differs: %d bytes, want %d", len(got), len(body))
			}
			if got := h.load.InFlight(dest); got != 1 {
				t.Errorf("in flight = %d, want 1", got)
			}
			checkDuplexResponse(t, h, s)
		})
	}
}

// checkDuplexResponse streams an SSE response through s and checks that
// every chunk is echoed and that the request stops counting at its end.
func checkDuplexResponse(t *testing.T, h *harness, s *session) {
	t.Helper()
	chunks := []string{"data: x\n\n", "data: [DONE]\n\n"}
	s.send(respHeaders(false), respBody([]byte(chunks[0]), false), respBody([]byte(chunks[1]), true))
	s.recv()
	for i, want := range chunks {
		sr := s.recv().GetResponseBody().GetResponse().GetBodyMutation().GetStreamedResponse()
		if string(sr.GetBody()) != want || sr.GetEndOfStream() != (i == len(chunks)-1) {
			t.Errorf("response chunk echo = %q eos=%v, want %q", sr.GetBody(), sr.GetEndOfStream(), want)
		}
	}
	if got := h.inflight(); got != 0 {
		t.Errorf("in flight = %d after the response ended, want 0", got)
	}
	if err := s.finish(); err != nil {
		t.Errorf("Process = %v", err)
	}
}

func TestRoutedInHeaders(t *testing.T) {
	tests := []struct {
		name    string
		mode    bodyMode
		eos     bool
		bodyAns func(*extprocv3.ProcessingResponse) bool // nil: no body is sent
	}{
		{"header-only buffered", buffered, true, nil},
		{"header-only duplex", duplex, true, nil},
		{"body mode none", none, false, nil},
		{"streamed body", streamed, false,
			func(r *extprocv3.ProcessingResponse) bool {
				return r.GetRequestBody() != nil && r.GetRequestBody().GetResponse().GetBodyMutation() == nil
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessConfig{defaultPool: "m"})
			s := h.open()
			s.send(first(reqHeaders("/v1/models?x=1", tc.eos), tc.mode, none))
			r := s.recv()
			if r.GetRequestHeaders() == nil {
				t.Fatalf("want a headers answer, got %v", r)
			}
			dest := routing(t, r, r.GetRequestHeaders().GetResponse())
			if dest != epA && dest != epB {
				t.Errorf("destination %q is not in the default pool", dest)
			}
			if tc.bodyAns != nil {
				s.send(reqBody([]byte(`{"model":"small"}`), true))
				if r := s.recv(); !tc.bodyAns(r) {
					t.Errorf("body answer = %v", r)
				}
			}
			if got := h.inflight(); got != 1 {
				t.Errorf("in flight = %d, want 1", got)
			}
			if err := s.finish(); err != nil {
				t.Errorf("Process = %v", err)
			}
			if got := h.inflight(); got != 0 {
				t.Errorf("in flight = %d after the stream closed, want 0", got)
			}
		})
	}
}

func TestUnknownPathRoutesOnModelOrLoad(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"model named", `{"input":"x","model":"small"}`, []string{epSmall}},
		{"alias named", `{"model":"m-alias"}`, []string{epA, epB}},
		{"no model", `{"input":"x"}`, []string{epA, epB}},
		{"not JSON", `input=x`, []string{epA, epB}},
	}
	for _, mode := range []bodyMode{buffered, duplex} {
		for _, tc := range tests {
			t.Run(mode.String()+"/"+tc.name, func(t *testing.T) {
				h := newHarness(t, harnessConfig{defaultPool: "m"})
				s := h.open()
				s.send(first(reqHeaders("/v1/embeddings", false), mode, none), reqBody([]byte(tc.body), true))
				r := s.recv()
				if mode == buffered {
					r = s.recv()
				}
				c := r.GetRequestBody().GetResponse()
				if mode == duplex {
					c = r.GetRequestHeaders().GetResponse()
					readChunks(t, s, false)
				}
				if dest := routing(t, r, c); !slices.Contains(tc.want, dest) {
					t.Errorf("destination %q, want one of %v", dest, tc.want)
				}
			})
		}
	}
}

func TestBodyModeFallsBackToOptions(t *testing.T) {
	h := newHarness(t, harnessConfig{opts: extproc.Options{DefaultBodyMode: extproc.BodyModeFullDuplexStreamed}})
	s := h.open()
	body := completion("small", "hi")
	s.send(reqHeaders("/v1/completions", false), reqBody(body, true))
	r := s.recv()
	if dest := routing(t, r, r.GetRequestHeaders().GetResponse()); dest != epSmall {
		t.Errorf("destination %q, want %s", dest, epSmall)
	}
	if got := readChunks(t, s, false); !bytes.Equal(got, body) {
		t.Errorf("body = %q, want %q", got, body)
	}
}

func TestObservabilityModeIsNotAnswered(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	s := h.open()
	for _, r := range []*extprocv3.ProcessingRequest{reqHeaders("/v1/completions", false),
		reqBody(completion("m", "x"), true), respHeaders(true)} {
		r.ObservabilityMode = true
		s.send(r)
	}
	if err := s.finish(); err != nil {
		t.Errorf("Process = %v", err)
	}
	if got := h.inflight(); got != 0 {
		t.Errorf("in flight = %d, want 0", got)
	}
}

func TestBufferedVariants(t *testing.T) {
	tests := []struct {
		name     string
		mode     bodyMode
		body     string
		eos      bool
		trailers bool
		want     string
	}{
		// Envoy sends a BUFFERED_PARTIAL prefix without end_of_stream when the
		// body outgrows its buffer: route on the model it names, never 400.
		{"partial prefix", filterv3.ProcessingMode_BUFFERED_PARTIAL, `{"model":"small","prompt":"aaaa`, false, false, epSmall},
		{"partial whole body", filterv3.ProcessingMode_BUFFERED_PARTIAL, `{"model":"small","prompt":"a"}`, true, false, epSmall},
		// BUFFERED sends the whole body without end_of_stream when trailers follow.
		{"buffered with trailers", buffered, `{"model":"small","prompt":"a"}`, false, true, epSmall},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessConfig{})
			s := h.open()
			s.send(first(reqHeaders("/v1/completions", false), tc.mode, none), reqBody([]byte(tc.body), tc.eos))
			s.recv()
			r := s.recv()
			if dest := routing(t, r, r.GetRequestBody().GetResponse()); dest != tc.want {
				t.Errorf("destination %q, want %q", dest, tc.want)
			}
			if tc.trailers {
				s.send(reqTrailers())
				if r := s.recv(); r.GetRequestTrailers() == nil {
					t.Errorf("trailers answer = %v", r)
				}
			}
			if err := s.finish(); err != nil {
				t.Errorf("Process = %v", err)
			}
		})
	}
}
