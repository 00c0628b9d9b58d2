package extproc

import (
	"bytes"
	json "encoding/json/v2"
)

// Reading usage from responses.
//
// The engine reports usage.prompt_tokens and
// usage.prompt_tokens_details.cached_tokens at the end of a response: in the
// JSON body of a non-streaming response, or in the last "data:" event before
// "data: [DONE]" of a streaming one (when the request asked for
// stream_options.include_usage, or the engine forces it). Bodies arrive in
// chunks split anywhere, so both readers work incrementally and keep bounded
// memory: the SSE scanner keeps only the unfinished line and the last data
// line whose usage is set, the JSON reader the body up to a limit.

// usage is what a response reported about its prompt. known is true only
// when cached_tokens was reported: vLLM leaves prompt_tokens_details out
// unless it is asked to report it, and a missing or null cached_tokens says
// nothing about the cache (not "zero cached").
type usage struct {
	prompt, cached int
	known          bool
}

// wireUsage is the part of a response (or SSE event) that carries usage.
// Pointers tell absent and null apart from zero.
type wireUsage struct {
	Usage *struct {
		PromptTokens        *int `json:"prompt_tokens"`
		PromptTokensDetails *struct {
			CachedTokens *int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// decodeUsage reads the top-level usage of one JSON object. Anything that is
// not a well-formed, consistent usage object is unknown: the TTL policy must
// not learn from numbers the router cannot trust.
func decodeUsage(b []byte) usage {
	var w wireUsage
	if json.Unmarshal(b, &w, decodeOptions) != nil || w.Usage == nil || w.Usage.PromptTokens == nil {
		return usage{}
	}
	d := w.Usage.PromptTokensDetails
	if d == nil || d.CachedTokens == nil {
		return usage{}
	}
	prompt, cached := *w.Usage.PromptTokens, *d.CachedTokens
	if cached < 0 || cached > prompt {
		return usage{}
	}
	return usage{prompt: prompt, cached: cached, known: true}
}

// usageReader reads one response body. The zero value is not usable; make it
// with newUsageReader. Not safe for concurrent use.
type usageReader struct {
	sse  bool
	scan sseScanner
	body boundedBody
}

func newUsageReader(sse bool, limit int) *usageReader {
	return &usageReader{sse: sse, scan: sseScanner{limit: limit}, body: boundedBody{limit: limit}}
}

func (r *usageReader) write(p []byte) {
	if r.sse {
		r.scan.write(p)
	} else {
		r.body.write(p)
	}
}

// finish returns the usage the body reported; call it once, at the end.
func (r *usageReader) finish() usage {
	if r.sse {
		return r.scan.finish()
	}
	return r.body.finish()
}

// boundedBody keeps a non-streaming response body up to limit bytes; a
// longer body is dropped and its usage is unknown.
type boundedBody struct {
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
	return decodeUsage(b.buf)
}

// sseScanner reads a server-sent-events stream line by line. A line longer
// than limit is skipped, so it holds at most about twice limit (a usage
// event is a few hundred bytes; token events with huge logprobs are not what
// it looks for).
type sseScanner struct {
	limit    int
	partial  []byte // the current line, when it spans body chunks
	overflow bool   // the current line passed limit and is being skipped
	last     []byte // payload of the last data line whose usage is set
}

func (s *sseScanner) write(p []byte) {
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.hold(p)
			return
		}
		if len(s.partial) == 0 && !s.overflow {
			// The common case: a whole line inside one chunk, read in place.
			s.line(p[:i])
		} else {
			s.hold(p[:i])
			if !s.overflow {
				s.line(s.partial)
			}
			s.partial, s.overflow = s.partial[:0], false
		}
		p = p[i+1:]
	}
}

func (s *sseScanner) hold(p []byte) {
	if s.overflow || len(p) == 0 {
		return
	}
	need := len(s.partial) + len(p)
	if need > s.limit {
		s.overflow, s.partial = true, s.partial[:0]
		return
	}
	if need > cap(s.partial) {
		// Grow by hand: append's doubling could pass the limit.
		grown := make([]byte, len(s.partial), min(max(2*need, 256), s.limit))
		copy(grown, s.partial)
		s.partial = grown
	}
	s.partial = append(s.partial, p...)
}

func (s *sseScanner) line(l []byte) {
	data, ok := bytes.CutPrefix(bytes.TrimSuffix(l, []byte("\r")), []byte("data:"))
	if ok && len(data) <= s.limit && usageSet(data) {
		s.last = append(s.last[:0], data...)
	}
}

// finish reads a last line that had no newline, then the kept usage event.
func (s *sseScanner) finish() usage {
	if len(s.partial) > 0 && !s.overflow {
		s.line(s.partial)
	}
	s.partial = nil
	if s.last == nil {
		return usage{}
	}
	return decodeUsage(s.last)
}

var usageKey = []byte(`"usage"`)

// usageSet reports whether an event has a "usage" member whose value is not
// null. It is a byte search, not a parse, to keep the per-chunk cost low: an
// escaped occurrence inside a string (\"usage\") never matches, and a string
// value "usage" is not followed by a colon. vLLM sends "usage":null in every
// token event when usage is requested, and the real object only at the end.
func usageSet(data []byte) bool {
	for {
		i := bytes.Index(data, usageKey)
		if i < 0 {
			return false
		}
		data = data[i+len(usageKey):]
		rest := skipBlanks(data)
		if len(rest) == 0 || rest[0] != ':' {
			continue
		}
		rest = skipBlanks(rest[1:])
		if len(rest) > 0 && rest[0] != 'n' {
			return true
		}
	}
}

// skipBlanks drops leading spaces and tabs; bytes.TrimLeft would build its
// cutset on every call of this per-event path.
func skipBlanks(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}
