package extproc_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/scorer"
)

// recorder drives a real decision and records every lifecycle call.
type recorder struct {
	d     *scorer.Decision
	mu    *sync.Mutex
	calls *[]string
}

func (r recorder) log(s string) { r.mu.Lock(); defer r.mu.Unlock(); *r.calls = append(*r.calls, s) }
func (r recorder) Commit()      { r.log("commit"); r.d.Commit() }
func (r recorder) Settle()      { r.log("settle"); r.d.Settle() }
func (r recorder) ResponseStarted() {
	r.log("started")
	r.d.ResponseStarted()
}
func (r recorder) Usage(p, c int, known bool) {
	r.log(fmt.Sprintf("usage(%d,%d,%v)", p, c, known))
	r.d.Usage(p, c, known)
}
func (r recorder) Served(ep string) scorer.ServedResult {
	res := r.d.Served(ep)
	r.log("served(" + res.String() + ")")
	return res
}
func (r recorder) Failed()  { r.log("failed"); r.d.Failed() }
func (r recorder) Release() { r.log("release"); r.d.Release() }
func (r recorder) Done()    { r.log("done"); r.d.Done() }

// tracked is a harness whose decisions are recorded.
type tracked struct {
	*harness
	mu    sync.Mutex
	calls []string
}

func newTracked(t *testing.T, opts extproc.Options) *tracked {
	tr := &tracked{harness: newHarness(t, harnessConfig{opts: opts})}
	extproc.TrackDecisions(tr.srv, func(d *scorer.Decision) extproc.Lifecycle {
		return recorder{d: d, mu: &tr.mu, calls: &tr.calls}
	})
	return tr
}

func (tr *tracked) recorded() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.calls)
}

func respHeadersWith(status, ctype string, eos bool) *extprocv3.ProcessingRequest {
	r := respHeaders(eos)
	hs := r.GetResponseHeaders().GetHeaders()
	hs.Headers[0].RawValue = []byte(status)
	if ctype != "" {
		hs.Headers = append(hs.Headers, &corev3.HeaderValue{Key: "content-type", RawValue: []byte(ctype)})
	}
	return r
}

const (
	sseUsage  = "data: {\"choices\":[{\"text\":\"a\"}],\"usage\":null}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":21,\"prompt_tokens_details\":{\"cached_tokens\":16}}}\n\ndata: [DONE]\n\n"
	jsonUsage = `{"choices":[{"text":"a"}],"usage":{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":4}}}`
	sseType   = "text/event-stream; charset=utf-8"
	jsonType  = "application/json"
)

var responseCases = []struct {
	name          string
	status, ctype string
	body          string // "" sends headers with end_of_stream
	want          string // the Usage call
}{
	{"streaming with usage", "200", sseType, sseUsage, "usage(21,16,true)"},
	{"streaming without usage", "200", sseType, "data: {\"choices\":[]}\n\ndata: [DONE]\n\n", "usage(0,0,false)"},
	{"json with usage", "200", jsonType, jsonUsage, "usage(9,4,true)"},
	{"json without details", "200", jsonType, `{"usage":{"prompt_tokens":9}}`, "usage(0,0,false)"},
	{"error status", "500", jsonType, `{"usage":{"prompt_tokens":9,"prompt_tokens_details":{"cached_tokens":4}}}`, "usage(0,0,false)"},
	{"no body", "200", jsonType, "", "usage(0,0,false)"},
}

// TestResponseLifecycle plays each response in each response body mode and
// checks the decision hears Commit, ResponseStarted, Usage and Release once
// each, in that order, with the response's numbers, and that the body goes
// back to Envoy as that mode requires.
func TestResponseLifecycle(t *testing.T) {
	for _, mode := range []bodyMode{streamed, duplex, buffered} {
		for _, tc := range responseCases {
			t.Run(mode.String()+"/"+tc.name, func(t *testing.T) {
				tr := newTracked(t, extproc.Options{})
				s := tr.open()
				s.h = tr.harness
				s.send(first(reqHeaders("/v1/completions", false), buffered, mode), reqBody(completion("m", "hi"), true))
				s.recv()
				s.recv()
				playResponse(t, s, mode, tc.status, tc.ctype, tc.body)
				if err := s.finish(); err != nil {
					t.Fatalf("Process = %v", err)
				}
				want := []string{"commit", "settle", "started", tc.want, "release", "done"}
				if !strings.HasPrefix(tc.status, "2") {
					// An error answer withdraws the decision's predictions.
					want = []string{"commit", "settle", "started", "failed", tc.want, "release", "done"}
				}
				if got := tr.recorded(); !slices.Equal(got, want) {
					t.Fatalf("calls %v, want %v", got, want)
				}
				s.check0()
			})
		}
	}
}

// playResponse sends the response headers and body as Envoy would in mode
// (STREAMED and FULL_DUPLEX_STREAMED in 5-byte chunks, BUFFERED whole) and
// checks every answer.
func playResponse(t *testing.T, s *session, mode bodyMode, status, ctype, body string) {
	t.Helper()
	s.send(respHeadersWith(status, ctype, body == ""))
	if r := s.recv(); r.GetResponseHeaders() == nil {
		t.Fatalf("headers answer %v", r)
	}
	if body == "" {
		return
	}
	chunks := slices.Collect(slices.Chunk([]byte(body), 5))
	if mode == buffered {
		chunks = [][]byte{[]byte(body)}
	}
	var echoed []byte
	for i, c := range chunks {
		eos := i == len(chunks)-1
		s.send(respBody(c, eos))
		r := s.recv().GetResponseBody().GetResponse()
		if r == nil {
			t.Fatal("no response body answer")
		}
		sr := r.GetBodyMutation().GetStreamedResponse()
		if mode != duplex {
			if r.GetBodyMutation() != nil || r.GetStatus() != extprocv3.CommonResponse_CONTINUE {
				t.Fatalf("%v chunk answered %v, want CONTINUE", mode, r)
			}
			continue
		}
		if sr.GetEndOfStream() != eos {
			t.Fatalf("echoed end_of_stream %v, want %v", sr.GetEndOfStream(), eos)
		}
		echoed = append(echoed, sr.GetBody()...)
	}
	if mode == duplex && !bytes.Equal(echoed, []byte(body)) {
		t.Fatalf("echoed %q, want %q", echoed, body)
	}
}

// TestResponseEndsEarly checks the decision hears unknown usage and is
// released once when the stream ends before the response does, and hears a
// usage event that did arrive complete.
func TestResponseEndsEarly(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"mid token events", sseUsage[:30], "usage(0,0,false)"},
		{"mid usage event", sseUsage[:90], "usage(0,0,false)"},
		{"after the usage event", sseUsage[:len(sseUsage)-10], "usage(21,16,true)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTracked(t, extproc.Options{})
			s := tr.open()
			s.send(first(reqHeaders("/v1/completions", false), duplex, streamed), reqBody(completion("m", "hi"), true))
			s.recv()
			s.recv()
			s.send(respHeadersWith("200", sseType, false), respBody([]byte(tt.body), false))
			s.recv()
			s.recv()
			s.fs.endErr = errBroken
			close(s.fs.in)
			s.wait()
			want := []string{"commit", "settle", "started", tt.want, "release", "done"}
			if got := tr.recorded(); !slices.Equal(got, want) {
				t.Fatalf("calls %v, want %v", got, want)
			}
		})
	}
}

// TestStreamEndsBeforeResponse checks that a stream ending before any
// response header (the request failed or was abandoned on the way) marks the
// decision failed, so its predictions are withdrawn, and still releases it.
func TestStreamEndsBeforeResponse(t *testing.T) {
	tr := newTracked(t, extproc.Options{})
	s := tr.open()
	s.send(first(reqHeaders("/v1/completions", false), duplex, streamed), reqBody(completion("m", "hi"), true))
	s.recv()
	s.recv()
	s.fs.endErr = errBroken
	close(s.fs.in)
	s.wait()
	want := []string{"commit", "settle", "failed", "usage(0,0,false)", "release", "done"}
	if got := tr.recorded(); !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
}

// TestResponseParsingOff checks the option and the NONE response mode: the
// body is not read, so usage is unknown.
func TestResponseParsingOff(t *testing.T) {
	tests := []struct {
		name     string
		opts     extproc.Options
		respMode bodyMode
	}{
		{"option off", extproc.Options{DisableResponseParsing: true}, streamed},
		{"tiny limit", extproc.Options{MaxResponseBytes: 8}, buffered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTracked(t, tt.opts)
			s := tr.open()
			s.send(first(reqHeaders("/v1/completions", false), buffered, tt.respMode), reqBody(completion("m", "hi"), true))
			s.recv()
			s.recv()
			playResponse(t, s, tt.respMode, "200", jsonType, jsonUsage)
			if err := s.finish(); err != nil {
				t.Fatal(err)
			}
			if got := tr.recorded(); !slices.Contains(got, "usage(0,0,false)") {
				t.Fatalf("calls %v, want unknown usage", got)
			}
		})
	}
}

// TestUsageMetrics checks the router-observed hit-rate counters.
func TestUsageMetrics(t *testing.T) {
	h := newHarness(t, harnessConfig{})
	for _, resp := range []struct{ ctype, body string }{{sseType, sseUsage}, {jsonType, jsonUsage}, {jsonType, `{}`}} {
		s := h.open()
		s.send(first(reqHeaders("/v1/completions", false), buffered, streamed), reqBody(completion("m", "hi"), true))
		s.recv()
		s.recv()
		playResponse(t, s, streamed, "200", resp.ctype, resp.body)
		if err := s.finish(); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]float64{
		"warmroute_extproc_prompt_tokens_total":           21 + 9,
		"warmroute_extproc_cached_tokens_total":           16 + 4,
		`warmroute_extproc_usage_total{result="known"}`:   2,
		`warmroute_extproc_usage_total{result="unknown"}`: 1,
	}
	got := gatherCounters(t, h.reg)
	for name, v := range want {
		if got[name] != v {
			t.Errorf("%s = %v, want %v", name, got[name], v)
		}
	}
}

// gatherCounters returns every counter as name{label="value"} -> value.
func gatherCounters(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			name := mf.GetName()
			if len(labels) > 0 {
				name += "{" + strings.Join(labels, ",") + "}"
			}
			out[name] = m.GetCounter().GetValue()
		}
	}
	return out
}

// TestServedEndpoint: the endpoint the proxy reports having used (metadata
// or response header) reaches the decision before ResponseStarted, is
// counted by how it compares with the choice, and the header is kept from
// the client. A fallback that served holds the request's load.
func TestServedEndpoint(t *testing.T) {
	viaMetadata := func(r *extprocv3.ProcessingRequest, ep string) {
		inner, _ := structpb.NewStruct(map[string]any{api.ServedHeader: ep})
		r.MetadataContext = &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{api.DestinationMetadataNamespace: inner}}
	}
	viaHeader := func(r *extprocv3.ProcessingRequest, ep string) {
		hs := r.GetResponseHeaders().GetHeaders()
		hs.Headers = append(hs.Headers, &corev3.HeaderValue{Key: api.ServedHeader, RawValue: []byte(ep)})
	}
	tests := []struct {
		name   string
		report func(*extprocv3.ProcessingRequest, string)
		pick   func(chosen, fallback string) string
		want   string
	}{
		{"metadata names the fallback", viaMetadata, func(_, fb string) string { return fb }, "fallback"},
		{"header names the fallback", viaHeader, func(_, fb string) string { return fb }, "fallback"},
		{"header names the choice", viaHeader, func(c, _ string) string { return c }, "chosen"},
		{"metadata names another endpoint", viaMetadata, func(string, string) string { return "192.0.2.7:8000" }, "unlisted"},
		{"nothing reported", nil, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := &tracked{harness: newHarness(t, harnessConfig{fallbacks: 1})}
			extproc.TrackDecisions(tr.srv, func(d *scorer.Decision) extproc.Lifecycle {
				return recorder{d: d, mu: &tr.mu, calls: &tr.calls}
			})
			s := tr.open()
			s.send(first(reqHeaders("/v1/completions", false), buffered, buffered), reqBody(completion("m", "hi"), true))
			s.recv()
			r := s.recv()
			dest := strings.Split(routing(t, r, r.GetRequestBody().GetResponse()), ",")
			if len(dest) != 2 {
				t.Fatalf("destination %v, want the choice and one fallback", dest)
			}
			resp := respHeadersWith("200", jsonType, false)
			served := dest[0]
			if tc.report != nil {
				served = tc.pick(dest[0], dest[1])
				tc.report(resp, served)
			}
			s.send(resp)
			rh := s.recv().GetResponseHeaders().GetResponse().GetHeaderMutation()
			if removed := slices.Contains(rh.GetRemoveHeaders(), api.ServedHeader); removed != (tc.report != nil) {
				t.Errorf("served header removed from the client response: %v, want %v", removed, tc.report != nil)
			}
			if tc.want == "fallback" {
				if a, b := tr.load.InFlight(dest[0]), tr.load.InFlight(dest[1]); a != 0 || b != 1 {
					t.Errorf("in flight chosen %d, fallback %d; want 0, 1", a, b)
				}
			}
			s.send(respBody([]byte("{}"), true))
			s.recv()
			if err := s.finish(); err != nil {
				t.Fatal(err)
			}
			want := []string{"commit", "settle", "started", "usage(0,0,false)", "release", "done"}
			if tc.want != "" {
				want = slices.Insert(want, 2, "served("+tc.want+")")
			}
			if got := tr.recorded(); !slices.Equal(got, want) {
				t.Fatalf("calls %v, want %v", got, want)
			}
			for _, res := range []string{"chosen", "fallback", "unlisted"} {
				want := 0.0
				if res == tc.want {
					want = 1
				}
				if got := tr.counter("warmroute_extproc_served_total", res); got != want {
					t.Errorf("served_total{%s} = %v, want %v", res, got, want)
				}
			}
			if tr.inflight() != 0 {
				t.Errorf("in flight %d after the response, want 0", tr.inflight())
			}
		})
	}
}
