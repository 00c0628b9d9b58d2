package extproc

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// sse builds an event stream from data payloads, ending with [DONE].
func sse(events ...string) string {
	var sb strings.Builder
	for _, e := range events {
		sb.WriteString("data: " + e + "\n\n")
	}
	sb.WriteString("data: [DONE]\n\n")
	return sb.String()
}

const (
	tokenEvent     = `{"id":"c1","choices":[{"index":0,"text":"hi"}],"usage":null}`
	usageEvent     = `{"id":"c1","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":8}}}`
	usageNoDetails = `{"id":"c1","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`
)

var sseCases = []struct {
	name string
	body string
	want usage
}{
	{"usage in final event", sse(tokenEvent, tokenEvent, usageEvent), usage{12, 8, true}},
	{"no usage requested", sse(`{"choices":[{"text":"a"}]}`, `{"choices":[{"text":"b"}]}`), usage{}},
	{"usage null throughout", sse(tokenEvent, tokenEvent), usage{}},
	{"no prompt_tokens_details", sse(tokenEvent, usageNoDetails), usage{}},
	{"cached_tokens null", sse(`{"usage":{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":null}}}`), usage{}},
	{"details without cached_tokens", sse(`{"usage":{"prompt_tokens":5,"prompt_tokens_details":{"audio_tokens":0}}}`), usage{}},
	{"zero cached", sse(`{"usage":{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":0}}}`), usage{5, 0, true}},
	{"continuous usage: last wins", sse(
		`{"choices":[{"text":"a"}],"usage":{"prompt_tokens":4,"prompt_tokens_details":{"cached_tokens":1}}}`,
		`{"choices":[],"usage":{"prompt_tokens":4,"prompt_tokens_details":{"cached_tokens":2}}}`), usage{4, 2, true}},
	{"crlf and no space after colon", "data:" + usageEvent + "\r\n\r\ndata:[DONE]\r\n\r\n", usage{12, 8, true}},
	{"no trailing newline", "data: " + usageEvent, usage{12, 8, true}},
	{"comments and other fields ignored", ": keepalive\nevent: message\nid: 3\ndata: " + usageEvent + "\n\n", usage{12, 8, true}},
	{"usage word inside text", sse(`{"choices":[{"text":"\"usage\": 5"}],"usage":null}`, `{"choices":[{"text":"usage"}]}`), usage{}},
	{"spaces around colon", sse(`{"usage" :  {"prompt_tokens":3,"prompt_tokens_details":{"cached_tokens":3}}}`), usage{3, 3, true}},
	{"malformed usage event", sse(tokenEvent, `{"usage":{"prompt_tokens":3,`), usage{}},
	{"malformed then good", sse(`{"usage":{"prompt_tokens":`, usageEvent), usage{12, 8, true}},
	{"good then malformed", sse(usageEvent, `{"usage":{"prompt_tokens":`), usage{}},
	{"negative prompt", sse(`{"usage":{"prompt_tokens":-1,"prompt_tokens_details":{"cached_tokens":0}}}`), usage{}},
	{"cached above prompt", sse(`{"usage":{"prompt_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}`), usage{}},
	{"wrong types", sse(`{"usage":{"prompt_tokens":"3","prompt_tokens_details":{"cached_tokens":1}}}`), usage{}},
	{"usage not an object", sse(`{"usage":7}`), usage{}},
	{"not json at all", "data: usage: everything\n\n", usage{}},
	{"empty body", "", usage{}},
}

// TestSSEUsage feeds every case whole and split at every byte boundary,
// and in one-byte chunks.
func TestSSEUsage(t *testing.T) {
	for _, tc := range sseCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := scanSSE(1<<20, []byte(tc.body)); got != tc.want {
				t.Fatalf("whole: %+v, want %+v", got, tc.want)
			}
			b := []byte(tc.body)
			for i := range b {
				if got := scanSSE(1<<20, b[:i], b[i:]); got != tc.want {
					t.Fatalf("split at %d: %+v, want %+v", i, got, tc.want)
				}
			}
			bytewise := make([][]byte, len(b))
			for i := range b {
				bytewise[i] = b[i : i+1]
			}
			if got := scanSSE(1<<20, bytewise...); got != tc.want {
				t.Fatalf("byte by byte: %+v, want %+v", got, tc.want)
			}
		})
	}
}

func scanSSE(limit int, chunks ...[]byte) usage {
	r := newUsageReader(true, limit)
	for _, c := range chunks {
		r.write(c)
	}
	return r.finish()
}

func TestSSEUsageBoundsLines(t *testing.T) {
	huge := `{"choices":[{"text":"` + strings.Repeat("x", 5000) + `"}],"usage":{"prompt_tokens":1,"prompt_tokens_details":{"cached_tokens":1}}}`
	tests := []struct {
		name   string
		body   string
		chunk  int
		want   usage
		maxMem int // bound on the usage event the reader keeps
	}{
		{"long token lines skipped, usage kept", sse(huge, huge, usageEvent), 1000, usage{12, 8, true}, 1024},
		{"usage line over the limit is unknown", sse(tokenEvent, huge), 700, usage{}, 1024},
		{"long usage line within one chunk is over the limit too", sse(huge), 1 << 20, usage{}, 1024},
		{"usage line arriving byte by byte", sse(usageEvent), 1, usage{12, 8, true}, 1024},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newUsageReader(true, 1024)
			b := []byte(tt.body)
			for len(b) > 0 {
				n := min(tt.chunk, len(b))
				r.write(b[:n])
				b = b[n:]
				if held := cap(r.last); held > tt.maxMem {
					t.Fatalf("reader keeps %d bytes, want at most %d", held, tt.maxMem)
				}
			}
			if got := r.finish(); got != tt.want {
				t.Fatalf("usage %+v, want %+v", got, tt.want)
			}
		})
	}
}

var jsonCases = []struct {
	name string
	body string
	want usage
}{
	{"completion", `{"id":"c","object":"text_completion","choices":[{"text":"hi"}],"usage":{"prompt_tokens":7,"total_tokens":9,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4}}}`, usage{7, 4, true}},
	{"usage first", `{"usage":{"prompt_tokens_details":{"cached_tokens":0},"prompt_tokens":7},"choices":[]}`, usage{7, 0, true}},
	{"no details", `{"choices":[],"usage":{"prompt_tokens":7}}`, usage{}},
	{"details null", `{"usage":{"prompt_tokens":7,"prompt_tokens_details":null}}`, usage{}},
	{"cached absent", `{"usage":{"prompt_tokens":7,"prompt_tokens_details":{}}}`, usage{}},
	{"usage null", `{"usage":null}`, usage{}},
	{"no usage", `{"choices":[{"text":"usage"}]}`, usage{}},
	{"prompt absent", `{"usage":{"prompt_tokens_details":{"cached_tokens":1}}}`, usage{}},
	{"truncated", `{"usage":{"prompt_tokens":7,"prompt_tokens_details":{"cached_tokens":4}}`, usage{}},
	{"trailing garbage", `{"usage":{"prompt_tokens":7,"prompt_tokens_details":{"cached_tokens":4}}} x`, usage{}},
	{"not an object", `[1,2]`, usage{}},
	{"empty", ``, usage{}},
	{"nested usage is not top level", `{"choices":[{"usage":{"prompt_tokens":7,"prompt_tokens_details":{"cached_tokens":4}}}]}`, usage{}},
}

func TestJSONUsage(t *testing.T) {
	for _, tc := range jsonCases {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte(tc.body)
			for i := 0; i <= len(b); i++ {
				if got := readJSON(1<<20, b[:i], b[i:]); got != tc.want {
					t.Fatalf("split at %d: %+v, want %+v", i, got, tc.want)
				}
			}
		})
	}
}

func readJSON(limit int, chunks ...[]byte) usage {
	r := newUsageReader(false, limit)
	for _, c := range chunks {
		r.write(c)
	}
	return r.finish()
}

func TestJSONUsageBounded(t *testing.T) {
	body := []byte(`{"choices":[{"text":"` + strings.Repeat("y", 4000) + `"}],"usage":{"prompt_tokens":7,"prompt_tokens_details":{"cached_tokens":4}}}`)
	tests := []struct {
		name  string
		limit int
		want  usage
	}{
		{"fits", len(body), usage{7, 4, true}},
		{"one byte over", len(body) - 1, usage{}},
		{"far over", 100, usage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newUsageReader(false, tt.limit)
			for c := range slices.Chunk(body, 512) {
				r.write(c)
				if cap(r.body.buf) > max(tt.limit, 2*len(body)) {
					t.Fatalf("holds %d bytes", cap(r.body.buf))
				}
			}
			if r.body.overflow && r.body.buf != nil {
				t.Fatal("an overflowed body is still held")
			}
			if got := r.finish(); got != tt.want {
				t.Fatalf("usage %+v, want %+v", got, tt.want)
			}
		})
	}
}

// FuzzSSEUsage checks that any stream, split anywhere, reads the same as
// when whole, never panics, and only reports consistent numbers.
func FuzzSSEUsage(f *testing.F) {
	for _, tc := range sseCases {
		f.Add([]byte(tc.body), uint16(3))
	}
	f.Fuzz(func(t *testing.T, body []byte, split uint16) {
		whole := scanSSE(1<<20, body)
		i := int(split) % (len(body) + 1)
		if got := scanSSE(1<<20, body[:i], body[i:]); got != whole {
			t.Fatalf("split at %d: %+v, whole: %+v", i, got, whole)
		}
		checkUsage(t, whole)
	})
}

// FuzzJSONUsage checks the JSON reader against splitting and the limit.
func FuzzJSONUsage(f *testing.F) {
	for _, tc := range jsonCases {
		f.Add([]byte(tc.body), uint16(5))
	}
	f.Fuzz(func(t *testing.T, body []byte, split uint16) {
		i := int(split) % (len(body) + 1)
		got := readJSON(1<<20, body[:i], body[i:])
		checkUsage(t, got)
		if len(body) > 0 && readJSON(len(body)-1, body) != (usage{}) {
			t.Fatal("a body over the limit gave a usage")
		}
	})
}

func checkUsage(t *testing.T, u usage) {
	t.Helper()
	if !u.known && u != (usage{}) || u.cached < 0 || u.cached > u.prompt {
		t.Fatalf("inconsistent usage %+v", u)
	}
}

// BenchmarkSSEUsage measures the per-chunk cost on the streaming path: one
// body message per token event, as vLLM flushes them.
func BenchmarkSSEUsage(b *testing.B) {
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
			for b.Loop() {
				if u := scanSSE(1<<20, chunks...); !u.known {
					b.Fatal("usage not found")
				}
			}
		})
	}
}
