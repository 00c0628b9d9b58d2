package extproc

import "github.com/warmroute/warmroute/openai"

// Reading usage from responses.
//
// The engine reports usage.prompt_tokens and
// usage.prompt_tokens_details.cached_tokens at the end of a response: in the
// JSON body of a non-streaming response, or in the last event before
// "data: [DONE]" of a streaming one (when the request asked for
// stream_options.include_usage, or the engine forces it). Bodies arrive in
// chunks split anywhere, so both readers work incrementally and keep bounded
// memory: the event parser holds the unfinished line and event, the reader
// the last event whose usage is set, the JSON reader the body up to a limit.

// usage is what a response reported about its prompt. known is true only
// when cached_tokens was reported: vLLM leaves prompt_tokens_details out
// unless it is asked to report it, and a missing or null cached_tokens says
// nothing about the cache (not "zero cached").
type usage struct {
	prompt, cached int
	known          bool
}

// decodeUsage reads the top-level usage of one JSON object. Anything that is
// not a well-formed, consistent usage object is unknown: the TTL policy must
// not learn from numbers the router cannot trust.
func decodeUsage(b []byte) usage {
	u, err := openai.DecodeUsage(b)
	if err != nil {
		return usage{}
	}
	prompt, cached, ok := u.CachedPrompt()
	return usage{prompt: prompt, cached: cached, known: ok}
}

// usageReader reads one response body. The zero value is not usable; make it
// with newUsageReader. Not safe for concurrent use.
type usageReader struct {
	events *openai.EventParser // nil for a JSON body
	last   []byte              // data of the last event whose usage is set
	body   boundedBody
	api    dialect
	// onID, when set, hears a Responses response's id once (usage_agents.go).
	onID func(id string, stored bool)
}

// forAPI makes r read d's usage and report a Responses id to onID.
func (r *usageReader) forAPI(d dialect, onID func(id string, stored bool)) *usageReader {
	r.api, r.body.api = d, d
	if d == dialectResponses {
		r.onID = onID
	}
	return r
}

// sawID reports the id of a Responses body or event once.
func (r *usageReader) sawID(b []byte) {
	if r.onID == nil {
		return
	}
	if id, stored, ok := responseID(b); ok {
		r.onID(id, stored)
		r.onID = nil
	}
}

func newUsageReader(sse bool, limit int) *usageReader {
	r := &usageReader{body: boundedBody{limit: limit}}
	if sse {
		r.events = openai.NewEventParser(limit, r.event)
	}
	return r
}

// event keeps an event that carries usage. A line or event over the limit
// is dropped by the parser, and its error ignored: token events with huge
// logprobs are not what the reader looks for.
func (r *usageReader) event(data []byte) {
	if r.onID != nil && isCreatedEvent(data) {
		r.sawID(data)
	}
	if openai.HasUsage(data) {
		r.last = append(r.last[:0], data...)
	}
}

func (r *usageReader) write(p []byte) {
	if r.events != nil {
		_ = r.events.Feed(p)
	} else {
		r.body.write(p)
	}
}

// finish returns the usage the body reported; call it once, at the end.
func (r *usageReader) finish() usage {
	if r.events == nil {
		if !r.body.overflow && len(r.body.buf) > 0 {
			r.sawID(r.body.buf)
		}
		return r.body.finish()
	}
	_ = r.events.End() // a last line over the limit is skipped like any other
	if r.last == nil {
		return usage{}
	}
	return decodeUsageAs(r.api, r.last)
}

// boundedBody keeps a non-streaming response body up to limit bytes; a
// longer body is dropped and its usage is unknown.
type boundedBody struct {
	api      dialect
	limit    int
	buf      []byte
	overflow bool
}

func (b *boundedBody) write(p []byte) {
	if b.overflow {
		return
	}
	if len(b.buf)+len(p) > b.limit {
		b.overflow, b.buf = true, nil
		return
	}
	b.buf = append(b.buf, p...)
}

func (b *boundedBody) finish() usage {
	if b.overflow || len(b.buf) == 0 {
		return usage{}
	}
	return decodeUsageAs(b.api, b.buf)
}
