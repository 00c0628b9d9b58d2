package extproc

import (
	"strconv"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"github.com/warmroute/warmroute/scorer"
)

// maxStreamedChunk bounds each StreamedBodyResponse. Envoy recommends at most
// 64 KiB per chunk; staying below it leaves room for framing.
const maxStreamedChunk = 62_000

// routeInHeaders routes a request whose body will not be seen (header-only
// requests and body modes that forward headers first) on load alone and
// answers in the headers response.
func (st *stream) routeInHeaders() reply {
	d, err := st.decide(func() (*scorer.Request, error) { return routeOnLoad(st.path, nil), nil })
	if err != nil {
		return st.fail(err)
	}
	msg := requestHeadersResponse(st.routingResponse(d))
	return st.routed(d, msg, []*extprocv3.ProcessingResponse{msg})
}

// routeBufferedBody routes on a body Envoy buffered; the header mutation rides
// on the body response, which BUFFERED mode still applies to the headers.
func (st *stream) routeBufferedBody(body []byte, complete bool) reply {
	n := int64(len(body))
	if n > st.srv.opts.MaxBodyBytes {
		return st.fail(st.tooLarge(n))
	}
	if err := st.holdBuffered(n); err != nil {
		return st.fail(err)
	}
	defer st.srv.budget.release(n)
	d, err := st.decide(func() (*scorer.Request, error) {
		if !complete {
			return routeOnLoad(st.path, body), nil
		}
		return st.parse(body)
	})
	if err != nil {
		return st.fail(err)
	}
	msg := requestBodyResponse(st.routingResponse(d))
	return st.routed(d, msg, []*extprocv3.ProcessingResponse{msg})
}

// routeDuplex answers a FULL_DUPLEX_STREAMED request once its body is
// complete: the held headers response carries the destination and the body's
// length, then the body goes back in chunks, then the trailers response when
// the body ended with trailers.
func (st *stream) routeDuplex(trailers bool) reply {
	d, err := st.decide(func() (*scorer.Request, error) { return st.parse(st.body) })
	if err != nil {
		return st.fail(err)
	}
	common := st.routingResponse(d)
	common.HeaderMutation.SetHeaders = append(common.HeaderMutation.SetHeaders,
		headerOption("content-length", strconv.Itoa(len(st.body))))
	first := requestHeadersResponse(common)
	msgs := make([]*extprocv3.ProcessingResponse, 0, 2+len(st.body)/maxStreamedChunk+1)
	msgs = append(msgs, first)
	msgs = appendStreamedChunks(msgs, st.body, !trailers)
	if trailers {
		msgs = append(msgs, requestTrailersResponse())
	}
	return st.routed(d, first, msgs)
}

// decide parses and picks, timing both.
func (st *stream) decide(parse func() (*scorer.Request, error)) (*scorer.Decision, error) {
	start := time.Now()
	defer func() { st.srv.metrics.decisionDuration.Observe(time.Since(start).Seconds()) }()
	req, err := parse()
	if err != nil {
		return nil, err
	}
	req.Subset = st.subset
	st.streaming = req.Stream
	d, err := st.srv.picker.Pick(st.ctx, req)
	if err == nil && d == nil {
		err = errNilDecision
	}
	return d, err
}

func (st *stream) routed(d *scorer.Decision, routeMsg *extprocv3.ProcessingResponse, msgs []*extprocv3.ProcessingResponse) reply {
	st.decision, st.routeMsg = d, routeMsg
	st.life = lifecycle(d)
	if st.srv.track != nil {
		st.life = st.srv.track(d)
	}
	routeMsg.DynamicMetadata = destinationMetadata(st.dest)
	return reply{msgs: msgs}
}

// parse reads a complete request body, keeping what the response reader
// needs to know.
func (st *stream) parse(body []byte) (*scorer.Request, error) {
	req, extra, err := parseRequest(st.path, body)
	st.includeUsage, st.store = extra.includeUsage, extra.store
	return req, err
}

// routingResponse sets the destination (and decision) headers and asks Envoy
// to recompute the route, which now depends on them.
func (st *stream) routingResponse(d *scorer.Decision) *extprocv3.CommonResponse {
	st.dest = destination(d) // the metadata repeats it (routed)
	mutation := setHeaders(headerOption(destinationHeaderName, st.dest))
	mutation = prefillerMutation(mutation, d)
	if st.srv.opts.DecisionHeader.onRequest() {
		mutation.SetHeaders = append(mutation.SetHeaders, decisionHeader(d))
	}
	return &extprocv3.CommonResponse{HeaderMutation: mutation, ClearRouteCache: true}
}

// appendStreamedChunks re-emits body as StreamedBodyResponses of at most
// maxStreamedChunk bytes. An empty body still sends one (empty) chunk so that
// Envoy sees the end of stream.
func appendStreamedChunks(msgs []*extprocv3.ProcessingResponse, body []byte, endOfStream bool) []*extprocv3.ProcessingResponse {
	for start := 0; ; start += maxStreamedChunk {
		end := min(start+maxStreamedChunk, len(body))
		last := end == len(body)
		msgs = append(msgs, streamedRequestBody(body[start:end], last && endOfStream))
		if last {
			return msgs
		}
	}
}
