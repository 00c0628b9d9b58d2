package scorer

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warmroute/warmroute/index"
)

// byteTokens makes one token per byte of a completion prompt (or passes ids
// through) and counts its calls, so a test sees whether text was tokenized.
type byteTokens struct{ calls atomic.Int64 }

func (b *byteTokens) Tokens(_ context.Context, req *Request, _ []string) ([]uint32, error) {
	b.calls.Add(1)
	text, ids, _ := firstPrompt(req)
	if ids != nil {
		return tokenIDs(ids)
	}
	if req.Kind == KindChat {
		text = strings.Repeat("x", promptBytes(req))
	}
	return make([]uint32, len(text)), nil
}

func chatOf(contents ...string) *Request {
	req := &Request{Kind: KindChat, Model: "m"}
	for _, c := range contents {
		raw, _ := json.Marshal(map[string]string{"role": "user", "content": c})
		req.Messages = append(req.Messages, Message{Role: "user", Content: c, Raw: raw})
	}
	return req
}

func textPrompt(n int) *Request {
	return &Request{Kind: KindCompletion, Model: "m", Prompts: []string{strings.Repeat("a", n)}}
}

func TestPromptLimit(t *testing.T) {
	const maxLen = 100 // 800 bytes of text at most
	tests := []struct {
		name        string
		maxModelLen int
		req         *Request
		tooLong     bool
		tokenized   bool
	}{
		{"ids within maxModelLen", maxLen, completion(prompt(1, maxLen)), false, true},
		{"ids beyond maxModelLen", maxLen, completion(prompt(1, maxLen+1)), true, true},
		{"text within bytes, tokens beyond", maxLen, textPrompt(maxLen + 1), true, true},
		{"text beyond bytes: not tokenized", maxLen, textPrompt(maxLen*maxBytesPerToken + 1), true, false},
		{"chat beyond bytes: not tokenized", maxLen, chatOf(strings.Repeat("a", 500), strings.Repeat("b", 301)), true, false},
		{"chat within", maxLen, chatOf("hello", "world"), false, true},
		{"unknown maxModelLen: long text tokenized", 0, textPrompt(DefaultMaxTokenizeBytes), false, true},
		{"unknown maxModelLen: beyond the default bytes", 0, textPrompt(DefaultMaxTokenizeBytes + 1), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m, err := NewMetrics(reg)
			if err != nil {
				t.Fatal(err)
			}
			ix, _ := index.New(index.Options{BlockSize: bs})
			pools := []PoolConfig{{Name: "m", Endpoints: []string{"10.0.0.1:8000"}, MaxModelLen: tt.maxModelLen}}
			tokens := &byteTokens{}
			s := New(NewPools(pools, ""), &Load{}, Options{Index: ix, Tokens: map[string]Tokens{"m": tokens}, Metrics: m})
			d, err := s.Pick(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Release()
			if got := strings.HasPrefix(d.Reason, "basis=load; tokenize=too_long;"); got != tt.tooLong {
				t.Errorf("reason %q: too long = %v, want %v", d.Reason, got, tt.tooLong)
			}
			if got := tokens.calls.Load() > 0; got != tt.tokenized {
				t.Errorf("tokenized = %v, want %v", got, tt.tokenized)
			}
			want := 0.0
			if tt.tooLong {
				want = 1
			}
			if got := testutil.ToFloat64(m.tokenizeErrors.WithLabelValues("too_long")); got != want {
				t.Errorf("tokenize_errors_total{too_long} = %v, want %v", got, want)
			}
		})
	}
}

func TestMaxModelLenValidation(t *testing.T) {
	err := Config{Pools: []PoolConfig{{Name: "m", MaxModelLen: -1}}}.Validate()
	if err == nil || !strings.Contains(err.Error(), "maxModelLen") {
		t.Errorf("Validate() = %v, want a maxModelLen error", err)
	}
}
