package gapsweep

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/warmroute/warmroute/openai"
)

var streamTests = []struct {
	name    string
	body    string
	content bool
	usage   Usage
	err     bool
}{
	{"completion with usage", "data: {\"choices\":[{\"text\":\"\"}]}\n\ndata: {\"choices\":[{\"text\":\"hi\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"prompt_tokens_details\":{\"cached_tokens\":64}}}\n\ndata: [DONE]\n\n",
		true, Usage{Known: true, Prompt: 100, Cached: intp(64)}, false},
	{"chat delta, usage without details", "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\r\n\r\n" +
		"data: {\"usage\":{\"prompt_tokens\":7}}\n\ndata: [DONE]\n\n", true, Usage{Known: true, Prompt: 7}, false},
	{"no usage", "data: {\"choices\":[{\"text\":\"a\"}]}\n\n: comment\nevent: x\n\n", true, Usage{}, false},
	{"empty", "", false, Usage{}, false},
	{"error event", "data: {\"error\":{\"message\":\"prefill failed\"}}\n\n", false, Usage{}, true},
	{"not json", "data: {oops\n\n", false, Usage{}, true},
	{"line too long", "data: " + strings.Repeat("x", openai.DefaultLimit+1) + "\n", false, Usage{}, true},
}

func TestReadStream(t *testing.T) {
	at := time.Unix(5, 0)
	for _, tt := range streamTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readStream(strings.NewReader(tt.body), func() time.Time { return at })
			if (err != nil) != tt.err {
				t.Fatalf("error %v, want error %v", err, tt.err)
			}
			if err != nil && !errors.Is(err, ErrStream) {
				t.Errorf("error %v is not ErrStream", err)
			}
			if got.firstContent.Equal(at) != tt.content {
				t.Errorf("first content at %v, want content %v", got.firstContent, tt.content)
			}
			if !sameUsage(got.usage, tt.usage) {
				t.Errorf("usage %+v, want %+v", got.usage, tt.usage)
			}
		})
	}
}

func sameUsage(a, b Usage) bool {
	if a.Known != b.Known || a.Prompt != b.Prompt || (a.Cached == nil) != (b.Cached == nil) {
		return false
	}
	return a.Cached == nil || *a.Cached == *b.Cached
}

func TestUsageUncached(t *testing.T) {
	tests := []struct {
		name string
		u    Usage
		want *int
	}{
		{"known", Usage{Known: true, Prompt: 100, Cached: intp(64)}, intp(36)},
		{"no details", Usage{Known: true, Prompt: 100}, nil},
		{"no usage", Usage{}, nil},
		{"cached above prompt clamps", Usage{Known: true, Prompt: 10, Cached: intp(16)}, intp(0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.u.Uncached()
			if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
				t.Errorf("Uncached = %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzReadStream(f *testing.F) {
	for _, tt := range streamTests {
		if len(tt.body) < 4096 {
			f.Add(tt.body)
		}
	}
	f.Fuzz(func(t *testing.T, body string) {
		r, err := readStream(strings.NewReader(body), time.Now)
		if err != nil && !errors.Is(err, ErrStream) {
			t.Fatalf("error %v is not ErrStream", err)
		}
		if u := r.usage.Uncached(); u != nil && *u < 0 {
			t.Fatalf("negative uncached %d", *u)
		}
	})
}
