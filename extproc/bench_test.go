package extproc_test

import (
	"context"
	json "encoding/json/v2"
	"fmt"
	"io"
	"strings"
	"testing"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"

	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/scorer"
)

var benchSizes = []struct {
	name string
	n    int
}{{"1KB", 1 << 10}, {"64KB", 64 << 10}, {"1MB", 1 << 20}}

// scriptStream replays a fixed exchange as Envoy would send it and discards
// the answers, so a benchmark measures the server alone.
type scriptStream struct {
	grpc.ServerStream
	reqs []*extprocv3.ProcessingRequest
	next int
	sent int
}

func (s *scriptStream) Context() context.Context { return context.Background() }

func (s *scriptStream) Recv() (*extprocv3.ProcessingRequest, error) {
	if s.next == len(s.reqs) {
		return nil, io.EOF
	}
	s.next++
	return s.reqs[s.next-1], nil
}

func (s *scriptStream) Send(*extprocv3.ProcessingResponse) error { s.sent++; return nil }

// exchange is one request and its response as Envoy streams them; duplex
// bodies arrive in 64 KiB chunks like Envoy's read buffers.
func exchange(mode bodyMode, body []byte) []*extprocv3.ProcessingRequest {
	reqs := []*extprocv3.ProcessingRequest{
		first(reqHeaders("/v1/completions", false, "content-length", itoa(len(body))), mode, mode)}
	chunk := len(body)
	if mode == duplex {
		chunk = 64 << 10
	}
	for off := 0; off < len(body); off += chunk {
		end := min(off+chunk, len(body))
		reqs = append(reqs, reqBody(body[off:end], end == len(body)))
	}
	return append(reqs, respHeaders(false), respBody([]byte(`{"choices":[{"text":"ok"}]}`), true))
}

func BenchmarkExchange(b *testing.B) {
	for _, mode := range []bodyMode{buffered, duplex} {
		for _, size := range benchSizes {
			b.Run(mode.String()+"/"+size.name, func(b *testing.B) {
				load := &scorer.Load{}
				srv, err := extproc.New(scorer.New(scorer.NewPools(testPools, ""), load, scorer.Options{}),
					extproc.Options{}, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				reqs := exchange(mode, duplexBody(size.n))
				b.SetBytes(int64(size.n))
				b.ReportAllocs()
				for b.Loop() {
					s := &scriptStream{reqs: reqs}
					if err := srv.Process(s); err != nil {
						b.Fatal(err)
					}
				}
				if n := load.InFlight(epA) + load.InFlight(epB); n != 0 {
					b.Fatalf("in flight = %d after the benchmark", n)
				}
			})
		}
	}
}

func chatBody(n int) []byte {
	var msgs []map[string]any
	for i := 0; ; i++ {
		msgs = append(msgs, map[string]any{"role": []string{"user", "assistant"}[i%2],
			"content": []map[string]string{{"type": "text", "text": strings.Repeat("w", 500)}}})
		b, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs})
		if len(b) >= n {
			return b
		}
	}
}

func BenchmarkParseRequest(b *testing.B) {
	for _, size := range benchSizes {
		for _, kind := range []struct {
			path string
			body []byte
		}{{"/v1/completions", duplexBody(size.n)}, {"/v1/chat/completions", chatBody(size.n)}} {
			b.Run(fmt.Sprintf("%s/%s", strings.TrimPrefix(kind.path, "/v1/"), size.name), func(b *testing.B) {
				b.SetBytes(int64(len(kind.body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := extproc.ParseRequest(kind.path, kind.body); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// streamingExchange is a streaming completion whose response arrives as
// chunks token events (one per body message, as vLLM flushes them) and a
// usage event, in response body mode respMode.
func streamingExchange(chunks int, respMode bodyMode) []*extprocv3.ProcessingRequest {
	reqs := []*extprocv3.ProcessingRequest{
		first(reqHeaders("/v1/completions", false), buffered, respMode),
		reqBody(completion("m", "hello"), true),
		respHeadersWith("200", sseType, false),
	}
	token := []byte(`data: {"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n")
	for range chunks {
		reqs = append(reqs, respBody(token, false))
	}
	return append(reqs, respBody([]byte(sseUsage), true))
}

// BenchmarkStreamingResponse measures a whole streaming exchange with and
// without usage parsing: the difference is what reading usage costs the
// streaming path.
func BenchmarkStreamingResponse(b *testing.B) {
	for _, chunks := range []int{10, 100, 1000} {
		for _, respMode := range []bodyMode{streamed, duplex} {
			for _, off := range []bool{false, true} {
				name := fmt.Sprintf("%d_chunks/%v/parsing=%v", chunks, respMode, !off)
				b.Run(name, func(b *testing.B) {
					srv, err := extproc.New(scorer.New(scorer.NewPools(testPools, ""), &scorer.Load{}, scorer.Options{}),
						extproc.Options{DisableResponseParsing: off}, nil, nil)
					if err != nil {
						b.Fatal(err)
					}
					reqs := streamingExchange(chunks, respMode)
					b.ReportAllocs()
					for b.Loop() {
						if err := srv.Process(&scriptStream{reqs: reqs}); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
