package extproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"

	filterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"github.com/warmroute/warmroute/scorer"
)

// stream is the state of one ext_proc stream. It is owned by the goroutine
// running Process and not safe for concurrent use.
type stream struct {
	srv *Server
	ctx context.Context

	reqMode, respMode filterv3.ProcessingMode_BodySendMode
	configured        bool // protocol_config seen

	path          string
	contentLength int64    // -1 when the request did not say
	subset        []string // non-nil once a subset hint was seen
	body          []byte   // accumulated in FULL_DUPLEX_STREAMED
	held          int64    // cap(body), reserved from the server's budget
	// readAhead is what the stream's receive goroutine holds reserved for
	// messages read ahead and not yet taken over (see readahead.go). The
	// stream's own reservations may overdraw the budget by that much: those
	// bytes are this stream's, reserved moments early.
	readAhead atomic.Int64

	decision *scorer.Decision
	life     lifecycle // drives decision; set with it
	// committed is set once the answer naming the destination was sent.
	committed bool
	// streaming and includeUsage are the request's stream and
	// stream_options.include_usage, for reading the response.
	streaming, includeUsage bool
	// store is a Responses request's store: its response id is learnt.
	store bool
	// usage reads the response body; nil when it is not read.
	usage     *usageReader
	ended     bool // end ran
	responded bool // response headers seen
	// routeMsg is the response that tells Envoy the destination; sending it
	// commits decision. dest is that destination's value.
	routeMsg *extprocv3.ProcessingResponse
	dest     string
}

// reply is what one ProcessingRequest produces.
type reply struct {
	msgs []*extprocv3.ProcessingResponse
	// done ends the stream once msgs are sent (after an ImmediateResponse).
	done bool
}

func one(m *extprocv3.ProcessingResponse) reply {
	return reply{msgs: []*extprocv3.ProcessingResponse{m}}
}

func newStream(ctx context.Context, s *Server) *stream {
	m := s.opts.DefaultBodyMode.envoy()
	return &stream{srv: s, ctx: ctx, reqMode: m, respMode: m, contentLength: -1}
}

// step handles one message and sends its replies. The decision is committed
// as the response naming the destination is handed to gRPC: committing just
// before the send (not after it returns) makes the load visible to
// concurrent picks as early as possible, and a failed send ends the stream,
// whose teardown releases it.
//
// Once the route (and any body chunks after it) is sent, the commit's
// deferred bookkeeping runs (Settle): the request no longer waits for it. A
// failed send leaves it to Release.
func (st *stream) step(srv extprocv3.ExternalProcessor_ProcessServer, req *extprocv3.ProcessingRequest) (bool, error) {
	r := st.handle(req)
	settle := false
	for _, m := range r.msgs {
		if m == st.routeMsg {
			st.commit()
			settle = true
		}
		if err := srv.Send(m); err != nil {
			return true, fmt.Errorf("sending ext_proc response: %w", err)
		}
	}
	if settle {
		// After every message: a duplex request also waits for the
		// body chunks that follow the route.
		st.life.Settle()
	}
	if st.decision != nil && st.held > 0 {
		// Send has encoded the body's chunks: the response phase, which may
		// last minutes, holds no request bytes.
		st.dropBody()
	}
	return r.done, nil
}

// handle dispatches one message to its phase. A panic in a phase becomes a
// 500 for this request only.
func (st *stream) handle(req *extprocv3.ProcessingRequest) (r reply) {
	defer func() {
		if v := recover(); v != nil {
			r = st.panicked(v)
		}
	}()
	st.observe(req)
	if req.GetObservabilityMode() {
		// Envoy ignores answers in observability mode.
		return reply{}
	}
	switch v := req.GetRequest().(type) {
	case *extprocv3.ProcessingRequest_RequestHeaders:
		return st.onRequestHeaders(v.RequestHeaders)
	case *extprocv3.ProcessingRequest_RequestBody:
		return st.onRequestBody(v.RequestBody)
	case *extprocv3.ProcessingRequest_RequestTrailers:
		return st.onRequestTrailers()
	case *extprocv3.ProcessingRequest_ResponseHeaders:
		return st.onResponseHeaders(v.ResponseHeaders, req.GetMetadataContext())
	case *extprocv3.ProcessingRequest_ResponseBody:
		return st.onResponseBody(v.ResponseBody)
	case *extprocv3.ProcessingRequest_ResponseTrailers:
		return st.onResponseTrailers()
	default:
		// Flow-control-only messages need no answer.
		return reply{}
	}
}

// observe records what any message may carry: the protocol configuration
// (first message only) and the gateway's subset hint.
func (st *stream) observe(req *extprocv3.ProcessingRequest) {
	if pc := req.GetProtocolConfig(); pc != nil && !st.configured {
		st.reqMode, st.respMode, st.configured = pc.GetRequestBodyMode(), pc.GetResponseBodyMode(), true
	}
	if st.subset == nil {
		st.subset = subsetHint(req.GetMetadataContext())
	}
}

func (st *stream) onRequestHeaders(h *extprocv3.HttpHeaders) reply {
	st.readRequestHeaders(h)
	if h.GetEndOfStream() {
		return st.routeInHeaders()
	}
	if st.contentLength > st.srv.opts.MaxBodyBytes {
		return st.fail(st.tooLarge(st.contentLength))
	}
	switch {
	case st.reqMode == filterv3.ProcessingMode_FULL_DUPLEX_STREAMED:
		// Hold the headers: they are answered with the destination once the
		// whole body has arrived. Nothing is allocated until bytes arrive.
		return reply{}
	case buffered(st.reqMode):
		return one(requestHeadersResponse(&extprocv3.CommonResponse{}))
	default:
		// NONE, STREAMED and GRPC forward the headers before the body can
		// be read (header changes made on a streamed body are ignored), so
		// the request is routed on load alone.
		return st.routeInHeaders()
	}
}

func (st *stream) readRequestHeaders(h *extprocv3.HttpHeaders) {
	for _, hv := range h.GetHeaders().GetHeaders() {
		switch strings.ToLower(hv.GetKey()) {
		case ":path":
			st.path = headerValue(hv)
		case "content-length":
			if n, err := strconv.ParseInt(headerValue(hv), 10, 64); err == nil && n >= 0 {
				st.contentLength = n
			}
		}
	}
}

func (st *stream) onRequestBody(b *extprocv3.HttpBody) reply {
	switch {
	case st.decision != nil:
		// Already routed (NONE/STREAMED/GRPC): pass the body through.
		return one(passRequestBody(st.reqMode, b))
	case st.reqMode == filterv3.ProcessingMode_FULL_DUPLEX_STREAMED:
		return st.accumulate(b)
	case buffered(st.reqMode):
		// BUFFERED sends the whole body at once (end_of_stream is false only
		// when trailers follow); BUFFERED_PARTIAL may send a prefix.
		complete := b.GetEndOfStream() || st.reqMode == filterv3.ProcessingMode_BUFFERED
		return st.routeBufferedBody(b.GetBody(), complete)
	default:
		return one(passRequestBody(st.reqMode, b))
	}
}

func (st *stream) accumulate(b *extprocv3.HttpBody) reply {
	if n := int64(len(st.body) + len(b.GetBody())); n > st.srv.opts.MaxBodyBytes {
		return st.fail(st.tooLarge(n))
	}
	if err := st.grow(len(b.GetBody())); err != nil {
		return st.fail(err)
	}
	st.body = append(st.body, b.GetBody()...)
	if !b.GetEndOfStream() {
		return reply{}
	}
	return st.routeDuplex(false)
}

// onRequestTrailers in FULL_DUPLEX_STREAMED marks the end of a body that had
// trailers; otherwise they are passed through unchanged.
func (st *stream) onRequestTrailers() reply {
	if st.reqMode == filterv3.ProcessingMode_FULL_DUPLEX_STREAMED && st.decision == nil {
		return st.routeDuplex(true)
	}
	return one(requestTrailersResponse())
}

func (st *stream) commit() {
	st.routeMsg = nil
	st.life.Commit()
	st.committed = true
	st.srv.metrics.requests[outcomeRouted].Inc()
	if st.srv.log.Enabled(st.ctx, slog.LevelDebug) { // the arguments would allocate
		st.srv.log.Debug("routed request", "endpoint", st.decision.Endpoint, "pool", st.decision.Pool,
			"fallbacks", len(st.decision.Fallbacks), "reason", st.decision.Reason)
	}
}

// fail answers the request with the error's status and OpenAI error body.
func (st *stream) fail(err error) reply {
	status, body := errorReply(err)
	o := outcomeOf(status)
	if errors.Is(err, ErrOverloaded) {
		o = outcomeOverloaded
	}
	if errors.Is(err, scorer.ErrResponseNotFound) {
		o = outcomeResponseNotFound
	}
	st.srv.metrics.requests[o].Inc()
	st.srv.log.Debug("rejected request", "status", status, "outcome", o.String(), "err", err)
	msg := immediateResponse(status, body, o)
	if dialectOf(st.path) == dialectAnthropic {
		anthropicErrorBody(msg, status, body)
	}
	return reply{msgs: []*extprocv3.ProcessingResponse{msg}, done: true}
}

func (st *stream) panicked(v any) reply {
	st.routeMsg = nil
	st.srv.log.Error("recovered from a panic in the ext_proc handler", "panic_type", fmt.Sprintf("%T", v))
	st.srv.log.Debug("panic details", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	return st.fail(fmt.Errorf("handling ext_proc message: panic of type %T", v))
}

func (st *stream) tooLarge(n int64) error {
	return fmt.Errorf("%w: %d bytes, the limit is %d", ErrBodyTooLarge, n, st.srv.opts.MaxBodyBytes)
}

func buffered(m filterv3.ProcessingMode_BodySendMode) bool {
	return m == filterv3.ProcessingMode_BUFFERED || m == filterv3.ProcessingMode_BUFFERED_PARTIAL
}
