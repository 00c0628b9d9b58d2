package extproc

import (
	"mime"
	"strconv"
	"strings"

	filterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// The response side of a stream: the decision learns when the response
// started (prefill is over) and, at its end, the usage it reported, then is
// released.

func (st *stream) onResponseHeaders(h *extprocv3.HttpHeaders) reply {
	common := &extprocv3.CommonResponse{}
	if st.decision != nil && !st.srv.opts.DisableDecisionHeader {
		common.HeaderMutation = setHeaders(decisionHeader(st.decision))
	}
	if st.committed {
		// Envoy sends response headers before any body byte, so this is the
		// earliest sign that the engine finished the prefill.
		st.life.ResponseStarted()
		st.usage = st.usageReaderFor(h)
	}
	if h.GetEndOfStream() {
		st.end()
	}
	return one(responseHeadersResponse(common))
}

// usageReaderFor returns the reader for a response, or nil when its usage
// will not be read: parsing is off, Envoy sends no body, or the status is
// not 2xx (an error body carries no usage).
func (st *stream) usageReaderFor(h *extprocv3.HttpHeaders) *usageReader {
	if st.srv.opts.DisableResponseParsing || st.respMode == filterv3.ProcessingMode_NONE {
		return nil
	}
	var status, ctype string
	for _, hv := range h.GetHeaders().GetHeaders() {
		switch strings.ToLower(hv.GetKey()) {
		case ":status":
			status = headerValue(hv)
		case "content-type":
			ctype = headerValue(hv)
		}
	}
	if code, err := strconv.Atoi(status); err != nil || code < 200 || code > 299 {
		return nil
	}
	return newUsageReader(isEventStream(ctype, st.streaming), int(st.srv.opts.MaxResponseBytes))
}

// isEventStream trusts the response's content type and falls back to the
// request's stream flag when there is none.
func isEventStream(ctype string, streaming bool) bool {
	if ctype == "" {
		return streaming
	}
	mt, _, err := mime.ParseMediaType(ctype)
	return err == nil && mt == "text/event-stream"
}

func (st *stream) onResponseBody(b *extprocv3.HttpBody) reply {
	if st.usage != nil {
		st.usage.write(b.GetBody())
	}
	if b.GetEndOfStream() {
		st.end()
	}
	return one(passResponseBody(st.respMode, b))
}

func (st *stream) onResponseTrailers() reply {
	st.end()
	return one(responseTrailersResponse())
}

// end reports the response's usage and ends the request's load accounting.
// It runs once, at the response's end or when the stream closes first (a
// broken stream, a client that went away): the decision then hears whatever
// complete usage event was seen, else unknown. A no-op for a decision that
// was never committed.
func (st *stream) end() {
	if st.ended || !st.committed {
		return
	}
	st.ended = true
	var u usage
	if st.usage != nil {
		u = st.usage.finish()
		st.usage = nil
	}
	if !u.known {
		st.logUnknownUsage()
		u = usage{}
	}
	st.srv.metrics.observeUsage(u)
	st.life.Usage(u.prompt, u.cached, u.known)
	st.life.Release()
}

func (st *stream) logUnknownUsage() {
	if st.streaming && !st.includeUsage {
		st.srv.log.Debug("response usage unknown; the streaming request did not set stream_options.include_usage",
			"endpoint", st.decision.Endpoint)
		return
	}
	st.srv.log.Debug("response usage unknown", "endpoint", st.decision.Endpoint)
}
