package extproc

import (
	"mime"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	filterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"github.com/warmroute/warmroute/api"
)

// The response side of a stream: the decision learns when the response
// started (prefill is over) and, at its end, the usage it reported, then is
// released.

func (st *stream) onResponseHeaders(h *extprocv3.HttpHeaders, md *corev3.Metadata) reply {
	common := &extprocv3.CommonResponse{}
	if st.decision != nil && st.srv.opts.DecisionHeader.onResponse() {
		common.HeaderMutation = setHeaders(decisionHeader(st.decision))
	}
	if served, ok := servedEndpoint(h, md); ok {
		// Read, then kept from the client: it names a model server.
		common.HeaderMutation = removeHeader(common.HeaderMutation, api.ServedHeader)
		if st.committed {
			st.srv.metrics.served[st.life.Served(served)].Inc()
		}
	}
	if st.committed {
		// Envoy sends response headers before any body byte, so this is the
		// earliest sign that the engine finished the prefill.
		st.life.ResponseStarted()
		st.responded = true
		status, ctype := responseMeta(h)
		if status < 200 || status > 299 {
			// An error answer stores no blocks: withdraw the decision's
			// predictions now rather than let them steer requests until
			// they expire.
			st.life.Failed()
		} else {
			st.usage = st.usageReaderFor(ctype)
		}
	}
	if h.GetEndOfStream() {
		st.end()
	}
	return one(responseHeadersResponse(common))
}

// servedEndpoint reads the endpoint the proxy reports having used: the
// endpoint-picker protocol's envoy.lb / x-gateway-destination-endpoint-served
// metadata on the response, else the response header of that name (which an
// Envoy route can add from %UPSTREAM_REMOTE_ADDRESS%). ok is false when the
// proxy reports nothing.
func servedEndpoint(h *extprocv3.HttpHeaders, md *corev3.Metadata) (string, bool) {
	v := md.GetFilterMetadata()[api.DestinationMetadataNamespace].GetFields()[api.ServedHeader].GetStringValue()
	if v = strings.TrimSpace(v); v != "" {
		return v, true
	}
	for _, hv := range h.GetHeaders().GetHeaders() {
		if strings.EqualFold(hv.GetKey(), api.ServedHeader) {
			if v := strings.TrimSpace(headerValue(hv)); v != "" {
				return v, true
			}
		}
	}
	return "", false
}

// usageReaderFor returns the reader for a 2xx response, or nil when its
// usage will not be read: parsing is off, or Envoy sends no body.
func (st *stream) usageReaderFor(ctype string) *usageReader {
	if st.srv.opts.DisableResponseParsing || st.respMode == filterv3.ProcessingMode_NONE {
		return nil
	}
	r := newUsageReader(isEventStream(ctype, st.streaming), int(st.srv.opts.MaxResponseBytes))
	return r.forAPI(dialectOf(st.path), st.learnResponseID())
}

// responseMeta reads the status (0 when absent or malformed) and content type.
func responseMeta(h *extprocv3.HttpHeaders) (status int, ctype string) {
	for _, hv := range h.GetHeaders().GetHeaders() {
		switch strings.ToLower(hv.GetKey()) {
		case ":status":
			status, _ = strconv.Atoi(headerValue(hv))
		case "content-type":
			ctype = headerValue(hv)
		}
	}
	return status, ctype
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
	if !st.responded {
		// The stream ended before any response: the request failed or was
		// abandoned on the way, and its predictions are not to be trusted.
		st.life.Failed()
	}
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

// finish runs as the stream's Process returns: it ends the request (end)
// and then the decision's use (Done), which hands the decision's memory
// back to the scorer. No message can reach the stream after this, so
// nothing reads the decision again; st.decision is cleared all the same.
func (st *stream) finish() {
	st.end()
	if st.life != nil {
		st.life.Done()
		st.decision, st.life = nil, nil
	}
}

func (st *stream) logUnknownUsage() {
	if st.streaming && !st.includeUsage {
		st.srv.log.Debug("response usage unknown; the streaming request did not set stream_options.include_usage",
			"endpoint", st.decision.Endpoint)
		return
	}
	st.srv.log.Debug("response usage unknown", "endpoint", st.decision.Endpoint)
}
