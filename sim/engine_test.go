package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/warmroute/warmroute/internal/testwait"
)

func newTestEngine(t testing.TB, opts Options) *Engine {
	t.Helper()
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(opts, m)
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	return e
}

// drain decodes seq to the end and returns its tokens.
func drain(t testing.TB, seq *Sequence) []Token {
	t.Helper()
	var toks []Token
	for {
		tok, err := seq.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return toks
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		toks = append(toks, tok)
	}
}

func TestEngineSubmit(t *testing.T) {
	tests := []struct {
		name       string
		req        Request
		wantErr    error
		wantPrompt int
		wantOut    int
	}{
		{"text prompt default max", Request{Model: "m", Prompt: "hello big world"}, nil, 3, 5},
		{"token prompt", Request{Model: "m", Tokens: []int{1, 2, 3, 4}, MaxTokens: 2}, nil, 4, 2},
		{"fills context exactly", Request{Model: "m", Tokens: make([]int, 30), MaxTokens: 2}, nil, 30, 2},
		{"empty text", Request{Model: "m", Prompt: ""}, ErrEmptyPrompt, 0, 0},
		{"empty tokens", Request{Model: "m", Tokens: []int{}}, ErrEmptyPrompt, 0, 0},
		{"negative max", Request{Model: "m", Prompt: "x", MaxTokens: -1}, ErrBadMaxTokens, 0, 0},
		{"over context", Request{Model: "m", Tokens: make([]int, 30), MaxTokens: 3}, ErrPromptTooLong, 0, 0},
	}
	e := newTestEngine(t, Options{DefaultMaxTokens: 5, MaxModelLen: 32})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, err := e.Submit(context.Background(), tt.req)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Submit error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Submit: %v", err)
			}
			defer seq.Close()
			toks := drain(t, seq)
			u := seq.Usage()
			if len(toks) != tt.wantOut || u.CompletionTokens != tt.wantOut || u.PromptTokens != tt.wantPrompt {
				t.Fatalf("%d tokens, usage %+v; want %d prompt, %d out", len(toks), u, tt.wantPrompt, tt.wantOut)
			}
			if u.TotalTokens() != tt.wantPrompt+tt.wantOut || u.CachedTokens != 0 {
				t.Fatalf("usage %+v inconsistent", u)
			}
			if !seq.Done() || seq.FinishReason() != FinishLength {
				t.Fatalf("Done=%v FinishReason=%q after draining", seq.Done(), seq.FinishReason())
			}
		})
	}
	if r := testutil.ToFloat64(e.metrics.running); r != 0 {
		t.Fatalf("running gauge %v after all sequences closed", r)
	}
}

func TestEngineOutputIsAFunctionOfTheRequest(t *testing.T) {
	e := newTestEngine(t, Options{})
	text := func(req Request) string {
		seq, err := e.Submit(context.Background(), req)
		if err != nil {
			t.Fatalf("Submit: %v", err)
		}
		defer seq.Close()
		var s string
		for _, tok := range drain(t, seq) {
			s += tok.Text
		}
		return s
	}
	base := Request{Model: "m", Prompt: "the same prompt", MaxTokens: 12}
	other := base
	other.Prompt = "another prompt"
	otherModel := base
	otherModel.Model = "m2"
	if a, b := text(base), text(base); a != b {
		t.Fatalf("same request, different text: %q vs %q", a, b)
	}
	if text(base) == text(other) || text(base) == text(otherModel) {
		t.Fatalf("different requests generated the same text %q", text(base))
	}
	sameTokens := Request{Model: "m", Tokens: WordTokenizer{}.Encode(base.Prompt), MaxTokens: 12}
	if text(base) != text(sameTokens) {
		t.Fatal("text and its token ids generated different text")
	}
}

func TestEngineQueuesBeyondMaxRunning(t *testing.T) {
	e := newTestEngine(t, Options{MaxRunning: 1})
	first, err := e.Submit(context.Background(), Request{Model: "m", Prompt: "a"})
	if err != nil {
		t.Fatal(err)
	}
	admitted := make(chan *Sequence)
	go func() {
		seq, err := e.Submit(context.Background(), Request{Model: "m", Prompt: "b"})
		if err != nil {
			t.Errorf("second Submit: %v", err)
		}
		admitted <- seq
	}()
	waitEngineGauges(t, e, 1, 1)
	first.Close()
	first.Close() // idempotent: must not free a second slot
	second := <-admitted
	waitEngineGauges(t, e, 1, 0)
	second.Close()
	waitEngineGauges(t, e, 0, 0)
}

func TestEngineCancellation(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		// hold occupies the only slot so the request under test waits.
		hold bool
	}{
		{"while waiting", Options{MaxRunning: 1}, true},
		{"during prefill", Options{TTFT: time.Hour}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEngine(t, tt.opts)
			if tt.hold {
				held, err := e.Submit(context.Background(), Request{Model: "m", Prompt: "a"})
				if err != nil {
					t.Fatal(err)
				}
				defer held.Close()
			}
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error)
			go func() {
				_, err := e.Submit(ctx, Request{Model: "m", Prompt: "b"})
				errc <- err
			}()
			if tt.hold {
				waitEngineGauges(t, e, 1, 1)
			} else {
				waitEngineGauges(t, e, 1, 0)
			}
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Fatalf("Submit error = %v, want context.Canceled", err)
			}
			want := 0.0
			if tt.hold {
				want = 1
			}
			waitEngineGauges(t, e, want, 0)
		})
	}
}

func TestSequenceNextStopsOnCancel(t *testing.T) {
	e := newTestEngine(t, Options{DecodePerToken: time.Hour})
	seq, err := e.Submit(context.Background(), Request{Model: "m", Prompt: "a", MaxTokens: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	if _, err := seq.Next(context.Background()); err != nil {
		t.Fatalf("first token comes from prefill and must not wait: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := seq.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next error = %v, want context.Canceled", err)
	}
	if u := seq.Usage(); u.CompletionTokens != 1 {
		t.Fatalf("cancelled step counted: %+v", u)
	}
}

func TestCostModelPrefill(t *testing.T) {
	c := costModel{ttft: 5 * time.Millisecond, prefillPerToken: time.Millisecond}
	tests := []struct {
		name         string
		prompt, hits int
		first        bool
		want         time.Duration
	}{
		{"nothing cached", 10, 0, true, 15 * time.Millisecond},
		{"half cached", 10, 5, true, 10 * time.Millisecond},
		{"all but one cached", 10, 9, true, 6 * time.Millisecond},
		{"later chunk pays no ttft", 10, 0, false, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.step(tt.prompt-tt.hits, tt.first); got != tt.want {
				t.Fatalf("step(%d, %v) = %v, want %v", tt.prompt-tt.hits, tt.first, got, tt.want)
			}
		})
	}
}

func TestNewEngineRejectsBadOptions(t *testing.T) {
	_, err := NewEngine(Options{TTFT: -time.Second, Models: []string{""}}, nil)
	if err == nil {
		t.Fatal("want an error for negative ttft and an empty model name")
	}
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Fatal("want a registration error for a second simulator's metrics on one registry")
	}
}

// waitEngineGauges polls the gauges until they read running and waiting:
// they move on other goroutines. The deadline only bounds a hang; it is not
// a performance assertion.
func waitEngineGauges(t testing.TB, e *Engine, running, waiting float64) {
	t.Helper()
	testwait.Until(t, 5*time.Second, func() string {
		r, w := testutil.ToFloat64(e.metrics.running), testutil.ToFloat64(e.metrics.waiting)
		if r != running || w != waiting {
			return fmt.Sprintf("gauges running=%v waiting=%v, want %v and %v", r, w, running, waiting)
		}
		return ""
	})
}
