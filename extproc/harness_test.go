package extproc_test

import (
	"context"
	json "encoding/json/v2"
	"io"
	"strconv"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	filterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/scorer"
)

// Endpoints of the test pools.
const (
	epA     = "10.0.0.1:8000"
	epB     = "10.0.0.2:8000"
	epSmall = "10.0.1.1:8000"
)

var testPools = []scorer.PoolConfig{
	{Name: "m", Models: []string{"m-alias"}, Endpoints: []string{epA, epB}},
	{Name: "small", Endpoints: []string{epSmall}},
	{Name: "empty"},
}

type bodyMode = filterv3.ProcessingMode_BodySendMode

const (
	buffered = filterv3.ProcessingMode_BUFFERED
	duplex   = filterv3.ProcessingMode_FULL_DUPLEX_STREAMED
	streamed = filterv3.ProcessingMode_STREAMED
	none     = filterv3.ProcessingMode_NONE
)

// fakeStream is an in-memory ExternalProcessor_ProcessServer: the test plays
// Envoy through in and out.
type fakeStream struct {
	grpc.ServerStream
	ctx     context.Context
	in      chan *extprocv3.ProcessingRequest
	out     chan *extprocv3.ProcessingResponse
	endErr  error // returned by Recv once in is closed; io.EOF when nil
	sendErr error // returned by Send when set
}

func (f *fakeStream) Context() context.Context { return f.ctx }

func (f *fakeStream) Recv() (*extprocv3.ProcessingRequest, error) {
	select {
	case r, ok := <-f.in:
		if ok {
			return r, nil
		}
		if f.endErr != nil {
			return nil, f.endErr
		}
		return nil, io.EOF
	case <-f.ctx.Done():
		return nil, status.FromContextError(f.ctx.Err()).Err()
	}
}

func (f *fakeStream) Send(r *extprocv3.ProcessingResponse) error {
	if f.sendErr != nil {
		return f.sendErr
	}
	f.out <- r
	return nil
}

type harnessConfig struct {
	opts        extproc.Options
	defaultPool string // pool for requests without a known model; none by default
	fallbacks   int
	picker      extproc.Picker // default: a scorer over testPools
}

// harness runs one Server over the test pools.
type harness struct {
	t    *testing.T
	srv  *extproc.Server
	load *scorer.Load
	reg  *prometheus.Registry
}

func newHarness(t *testing.T, cfg harnessConfig) *harness {
	t.Helper()
	h := &harness{t: t, load: &scorer.Load{}, reg: prometheus.NewRegistry()}
	p := cfg.picker
	if p == nil {
		p = scorer.New(scorer.NewPools(testPools, cfg.defaultPool), h.load, scorer.Options{Fallbacks: cfg.fallbacks})
	}
	m, err := extproc.NewMetrics(h.reg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := extproc.New(p, cfg.opts, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	return h
}

// inflight sums the router-tracked in-flight requests over all endpoints.
func (h *harness) inflight() int64 {
	var n int64
	for _, v := range h.load.Snapshot() {
		n += v
	}
	return n
}

// session is one running Process call.
type session struct {
	t      *testing.T
	h      *harness
	fs     *fakeStream
	cancel context.CancelFunc
	done   chan error
}

func (h *harness) open() *session {
	ctx, cancel := context.WithCancel(context.Background())
	s := &session{
		t:      h.t,
		h:      h,
		fs:     &fakeStream{ctx: ctx, in: make(chan *extprocv3.ProcessingRequest, 256), out: make(chan *extprocv3.ProcessingResponse, 256)},
		cancel: cancel,
		done:   make(chan error, 1),
	}
	go func() { s.done <- h.srv.Process(s.fs) }()
	h.t.Cleanup(func() {
		cancel()
		<-s.done
	})
	return s
}

func (s *session) send(reqs ...*extprocv3.ProcessingRequest) {
	for _, r := range reqs {
		s.fs.in <- r
	}
}

// recv returns the next answer; waiting is bounded so a hang fails the test
// instead of the whole run.
func (s *session) recv() *extprocv3.ProcessingResponse {
	s.t.Helper()
	select {
	case r := <-s.fs.out:
		return r
	case err := <-s.done:
		s.done <- err // for the cleanup
		// Answers sent just before Process returned are still buffered.
		select {
		case r := <-s.fs.out:
			return r
		default:
		}
		s.t.Fatalf("Process returned %v while an answer was expected", err)
	case <-time.After(10 * time.Second):
		s.t.Fatal("no answer from Process")
	}
	return nil
}

// wait returns Process's result after the stream ended by itself.
func (s *session) wait() error {
	s.t.Helper()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		return err
	case <-time.After(10 * time.Second):
		s.t.Fatal("Process did not return")
		return nil
	}
}

// finish plays Envoy closing the stream and returns Process's result; no
// answer may be left unread.
func (s *session) finish() error {
	s.t.Helper()
	close(s.fs.in)
	err := s.wait()
	if n := len(s.fs.out); n > 0 {
		s.t.Errorf("%d unexpected answers left, first: %v", n, <-s.fs.out)
	}
	return err
}

// Requests as Envoy sends them.

func reqHeaders(path string, eos bool, kv ...string) *extprocv3.ProcessingRequest {
	hs := []*corev3.HeaderValue{
		{Key: ":method", RawValue: []byte("POST")},
		{Key: ":path", RawValue: []byte(path)},
	}
	for i := 0; i+1 < len(kv); i += 2 {
		hs = append(hs, &corev3.HeaderValue{Key: kv[i], RawValue: []byte(kv[i+1])})
	}
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestHeaders{
		RequestHeaders: &extprocv3.HttpHeaders{Headers: &corev3.HeaderMap{Headers: hs}, EndOfStream: eos}}}
}

// first adds the protocol_config Envoy puts on a stream's first message.
func first(r *extprocv3.ProcessingRequest, reqMode, respMode filterv3.ProcessingMode_BodySendMode) *extprocv3.ProcessingRequest {
	r.ProtocolConfig = &extprocv3.ProtocolConfiguration{RequestBodyMode: reqMode, ResponseBodyMode: respMode}
	return r
}

func withSubset(r *extprocv3.ProcessingRequest, v *structpb.Value) *extprocv3.ProcessingRequest {
	r.MetadataContext = &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{
		api.SubsetHintNamespace: {Fields: map[string]*structpb.Value{api.SubsetHintKey: v}}}}
	return r
}

func reqBody(b []byte, eos bool) *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestBody{
		RequestBody: &extprocv3.HttpBody{Body: b, EndOfStream: eos}}}
}

func reqTrailers() *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestTrailers{
		RequestTrailers: &extprocv3.HttpTrailers{}}}
}

func respHeaders(eos bool) *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{
		ResponseHeaders: &extprocv3.HttpHeaders{Headers: &corev3.HeaderMap{Headers: []*corev3.HeaderValue{
			{Key: ":status", RawValue: []byte("200")}}}, EndOfStream: eos}}}
}

func respBody(b []byte, eos bool) *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseBody{
		ResponseBody: &extprocv3.HttpBody{Body: b, EndOfStream: eos}}}
}

func respTrailers() *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseTrailers{
		ResponseTrailers: &extprocv3.HttpTrailers{}}}
}

func completion(model, prompt string) []byte {
	b, err := json.Marshal(map[string]any{"model": model, "prompt": prompt})
	if err != nil {
		panic(err)
	}
	return b
}

// Inspecting answers.

func headerIn(m *extprocv3.HeaderMutation, key string) (string, bool) {
	for _, o := range m.GetSetHeaders() {
		if o.GetHeader().GetKey() == key {
			if o.GetAppendAction() != corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD {
				return "", false
			}
			return string(o.GetHeader().GetRawValue()), true
		}
	}
	return "", false
}

// routing checks that c routes the request and returns the destination.
func routing(t *testing.T, r *extprocv3.ProcessingResponse, c *extprocv3.CommonResponse) string {
	t.Helper()
	dest, ok := headerIn(c.GetHeaderMutation(), api.DestinationHeader)
	if !ok || dest == "" {
		t.Fatalf("no destination header in %v", r)
	}
	if !c.GetClearRouteCache() {
		t.Errorf("clear_route_cache not set")
	}
	md := r.GetDynamicMetadata().GetFields()[api.DestinationMetadataNamespace].GetStructValue().GetFields()[api.DestinationHeader]
	if md.GetStringValue() != dest {
		t.Errorf("metadata destination %q, header %q", md.GetStringValue(), dest)
	}
	return dest
}

func immediate(t *testing.T, r *extprocv3.ProcessingResponse) (int, api.ErrorResponse) {
	t.Helper()
	ir := r.GetImmediateResponse()
	if ir == nil {
		t.Fatalf("want an immediate response, got %v", r)
	}
	if ct, _ := headerIn(ir.GetHeaders(), "content-type"); ct != "application/json" {
		t.Errorf("content-type = %q", ct)
	}
	var body api.ErrorResponse
	if err := json.Unmarshal(ir.GetBody(), &body); err != nil {
		t.Fatalf("error body %q: %v", ir.GetBody(), err)
	}
	code := int(ir.GetStatus().GetCode())
	if body.Error.Code != code {
		t.Errorf("body code %d, status %d", body.Error.Code, code)
	}
	return code, body
}

func isCode(err error, c codes.Code) bool { return status.Code(err) == c }

func itoa(n int) string { return strconv.Itoa(n) }
