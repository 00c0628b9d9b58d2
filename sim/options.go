package sim

import (
	"errors"
	"fmt"
	"time"
)

// Defaults used when an Options field is zero, and by the sim subcommand's
// flags for the cost model. The costs are small so that tests stay fast while
// the queue gauges still move.
const (
	DefaultAddr            = ":8000"
	DefaultModel           = "sim-model"
	DefaultMaxRunning      = 64
	DefaultMaxTokens       = 16
	DefaultMaxModelLen     = 32768
	DefaultMaxBodyBytes    = 8 << 20
	DefaultShutdownGrace   = 5 * time.Second
	DefaultTTFT            = 2 * time.Millisecond
	DefaultPrefillPerToken = 10 * time.Microsecond
	DefaultDecodePerToken  = time.Millisecond
)

// Options configures a simulator. The zero value is valid: every zero field
// takes its default, except the three costs, for which zero means "free" so
// that an Options{} simulator answers instantly in tests.
type Options struct {
	// Addr is where Run listens. Default DefaultAddr.
	Addr string
	// ID names this instance in the x-warmroute-served-by header. Default Addr.
	ID string
	// Models lists the model names served. Default [DefaultModel].
	Models []string
	// TTFT is a fixed cost paid once per request before its first token,
	// on top of the prefill cost.
	TTFT time.Duration
	// PrefillPerToken is paid for every prompt token not served from cache.
	PrefillPerToken time.Duration
	// DecodePerToken is paid for every generated token after the first.
	DecodePerToken time.Duration
	// MaxRunning bounds the requests running at once; others wait, which is
	// what vllm:num_requests_waiting reports. Default DefaultMaxRunning.
	MaxRunning int
	// MaxModelLen bounds prompt plus generated tokens, like vLLM's
	// --max-model-len. Default DefaultMaxModelLen.
	MaxModelLen int
	// DefaultMaxTokens is generated when a request sets no max_tokens.
	// Default DefaultMaxTokens.
	DefaultMaxTokens int
	// MaxBodyBytes bounds a request body; larger bodies get 413.
	// Default DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// PromptTokensDetails adds usage.prompt_tokens_details.cached_tokens to
	// responses, like vLLM's --enable-prompt-tokens-details.
	PromptTokensDetails bool
	// ShutdownGrace bounds how long Serve lets in-flight requests finish after
	// its context ends before cancelling them. Default DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// Tokenizer counts prompt tokens. Default WordTokenizer.
	Tokenizer Tokenizer
}

// WithDefaults returns a copy of o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.ID == "" {
		o.ID = o.Addr
	}
	if len(o.Models) == 0 {
		o.Models = []string{DefaultModel}
	}
	if o.MaxRunning == 0 {
		o.MaxRunning = DefaultMaxRunning
	}
	if o.MaxModelLen == 0 {
		o.MaxModelLen = DefaultMaxModelLen
	}
	if o.DefaultMaxTokens == 0 {
		o.DefaultMaxTokens = DefaultMaxTokens
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.ShutdownGrace == 0 {
		o.ShutdownGrace = DefaultShutdownGrace
	}
	if o.Tokenizer == nil {
		o.Tokenizer = WordTokenizer{}
	}
	return o
}

// Validate reports every problem in o, joined, or nil.
func (o Options) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"ttft", int64(o.TTFT)},
		{"prefill per token", int64(o.PrefillPerToken)},
		{"decode per token", int64(o.DecodePerToken)},
		{"shutdown grace", int64(o.ShutdownGrace)},
		{"max running", int64(o.MaxRunning)},
		{"max model len", int64(o.MaxModelLen)},
		{"default max tokens", int64(o.DefaultMaxTokens)},
		{"max body bytes", o.MaxBodyBytes},
	} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative", f.name))
		}
	}
	for i, m := range o.Models {
		if m == "" {
			errs = append(errs, fmt.Errorf("models[%d] must not be empty", i))
		}
	}
	return errors.Join(errs...)
}
