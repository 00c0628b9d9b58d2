package sim

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkCompletion measures one non-streaming request through the whole
// handler (decode, tokenize, generate, encode) at zero simulated cost, so it
// is the simulator's own overhead per request.
func BenchmarkCompletion(b *testing.B) {
	benchmarkAPI(b, `{"model":"sim-model","prompt":"%s","max_tokens":16}`, "/v1/completions")
}

// BenchmarkCompletionStream is the same request streamed as SSE.
func BenchmarkCompletionStream(b *testing.B) {
	benchmarkAPI(b, `{"model":"sim-model","prompt":"%s","max_tokens":16,"stream":true}`, "/v1/completions")
}

func benchmarkAPI(b *testing.B, tmpl, path string) {
	s, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	for _, words := range []int{16, 1024, 16384} {
		body := strings.Replace(tmpl, "%s", strings.Repeat("warm prefix ", words/2), 1)
		b.Run(sizeName(words)+"words", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
