package openai

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkEventParser measures the path extproc takes for every response
// body chunk of a stream: one chunk per token event (as vLLM flushes them),
// each event sifted with HasUsage, the usage event decoded at the end.
func BenchmarkEventParser(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		chunks := make([][]byte, 0, n+2)
		total := 0
		for range n {
			chunks = append(chunks, []byte("data: "+tokenEvent+"\n\n"))
		}
		chunks = append(chunks, []byte("data: "+usageEvent+"\n\n"), []byte("data: [DONE]\n\n"))
		for _, c := range chunks {
			total += len(c)
		}
		b.Run(fmt.Sprintf("%d_chunks", n), func(b *testing.B) {
			b.SetBytes(int64(total))
			b.ReportAllocs()
			var last []byte
			p := NewEventParser(0, func(d []byte) {
				if HasUsage(d) {
					last = append(last[:0], d...)
				}
			})
			for b.Loop() {
				for _, c := range chunks {
					p.Feed(c)
				}
				p.End()
				if u, err := DecodeUsage(last); err != nil || u == nil {
					b.Fatal("usage not found")
				}
			}
		})
	}
}

// BenchmarkEventReader measures reading a whole stream from an io.Reader,
// as the validation tool and the e2e harnesses do.
func BenchmarkEventReader(b *testing.B) {
	for _, n := range []int{10, 1000} {
		stream := []byte{}
		for range n {
			stream = append(stream, "data: "+tokenEvent+"\n\n"...)
		}
		stream = append(stream, "data: [DONE]\n\n"...)
		b.Run(fmt.Sprintf("%d_events", n), func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for b.Loop() {
				if events, err := ReadEvents(bytes.NewReader(stream)); err != nil || len(events) != n+1 {
					b.Fatalf("%d events, %v", len(events), err)
				}
			}
		})
	}
}
