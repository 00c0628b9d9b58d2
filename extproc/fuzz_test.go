package extproc_test

import (
	"testing"

	"github.com/warmroute/warmroute/extproc"
)

// FuzzExchange plays whole request streams with arbitrary paths, bodies,
// body modes and chunkings: every stream must end with either a routing
// answer or an OpenAI error, and nothing may stay counted once it closes.
func FuzzExchange(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.path, []byte(tc.body), false, uint16(7), false)
	}
	for _, tc := range parseErrorCases {
		f.Add(tc.path, []byte(tc.body), true, uint16(3), true)
	}
	f.Fuzz(func(t *testing.T, path string, body []byte, useDuplex bool, chunk uint16, trailers bool) {
		h := newHarness(t, harnessConfig{defaultPool: "m", opts: extproc.Options{Config: extproc.Config{MaxBodyBytes: 4096}}})
		s := h.open()
		mode := buffered
		if useDuplex {
			mode = duplex
		}
		s.send(first(reqHeaders(path, false), mode, none))
		if mode == buffered {
			if r := s.recv(); r.GetRequestHeaders() == nil {
				t.Fatalf("buffered headers answer = %v", r)
			}
		}
		sendChunked(s, body, mode, int(chunk)+1, trailers)
		r := s.recv()
		if ir := r.GetImmediateResponse(); ir != nil {
			if code, _ := immediate(t, r); code != 400 && code != 404 && code != 413 {
				t.Fatalf("status %d for client input", code)
			}
		} else {
			c := r.GetRequestBody().GetResponse()
			if mode == duplex {
				c = r.GetRequestHeaders().GetResponse()
			}
			routing(t, r, c)
		}
		s.cancel()
		s.wait()
		if n := h.inflight(); n != 0 {
			t.Fatalf("in flight = %d after the stream ended", n)
		}
	})
}

// sendChunked sends body as Envoy would in mode: whole when buffered, in
// chunks of size n in duplex, ending with trailers when asked.
func sendChunked(s *session, body []byte, mode bodyMode, n int, trailers bool) {
	if mode == buffered {
		n = len(body) + 1
	}
	for off := 0; ; off += n {
		end := min(off+n, len(body))
		last := end == len(body)
		s.send(reqBody(body[off:end], last && !trailers))
		if last {
			break
		}
	}
	if trailers {
		s.send(reqTrailers())
	}
}
