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
	DefaultBlockSize       = 16
	DefaultNumBlocks       = 4096
	DefaultKVBufferSteps   = 10000
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
	// Tokenizer counts prompt tokens when TokenizerDir is empty. Default
	// WordTokenizer.
	Tokenizer Tokenizer
	// TokenizerDir holds a Hugging Face tokenizer.json (and
	// tokenizer_config.json for chat); when set, prompts are tokenized by
	// the project's tokenizer exactly as the router tokenizes them.
	TokenizerDir string

	// BlockSize is the KV block size in tokens. Default DefaultBlockSize.
	BlockSize int
	// NumBlocks is the KV cache capacity in blocks. Default DefaultNumBlocks.
	NumBlocks int
	// EngineSeed fixes the root of the block hash chain; nil draws it at
	// random, as a vLLM process does without PYTHONHASHSEED.
	EngineSeed *int64
	// PrefillChunk splits a prompt's prefill into steps of this many tokens,
	// each storing its newly full blocks in its own event batch; 0 is one step.
	PrefillChunk int
	// LoRAAdapters are served as extra model names; a request naming one
	// computes blocks under that adapter (its name is in every block's hash
	// and in BlockStored's lora_name).
	LoRAAdapters []string

	// KVEventsEndpoint is bound by a ZMQ PUB socket publishing KV events
	// (e.g. tcp://127.0.0.1:5557); empty disables events.
	KVEventsEndpoint string
	// KVReplayEndpoint is bound by the replay ROUTER socket; empty disables it.
	KVReplayEndpoint string
	// KVEventsTopic is the first frame of every message (vLLM default "").
	KVEventsTopic string
	// KVEventsFormat lays events out as maps (default) or legacy arrays.
	KVEventsFormat EventFormat
	// KVBufferSteps is how many batches replay can serve. Default
	// DefaultKVBufferSteps.
	KVBufferSteps int
	// DPRank is the data-parallel rank written in every batch.
	DPRank int
	// EventDelay and EventJitter (uniform in [0, jitter]) delay every batch
	// before it reaches the wire, preserving order.
	EventDelay, EventJitter time.Duration
	// EventDropRate is the probability that a batch never reaches the wire
	// (it stays replayable), which subscribers see as a sequence gap.
	EventDropRate float64
	// SilentStoreRate is the probability that a request stores no block
	// and publishes nothing while answering normally (a silent failure the
	// router cannot see). FaultSeed seeds that draw, so a run is repeatable.
	SilentStoreRate float64
	FaultSeed       uint64

	// Role is RoleBoth (""), RolePrefill or RoleDecode. A decode simulator
	// has a request naming a prefiller (x-prefiller-host-port) prefilled
	// there first, as llm-d's routing sidecar does (pd.go); the others
	// serve every request whole, and any answers a prefill request.
	Role string
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
	return o.cacheDefaults()
}

func (o Options) cacheDefaults() Options {
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.NumBlocks == 0 {
		o.NumBlocks = DefaultNumBlocks
	}
	if o.KVBufferSteps == 0 {
		o.KVBufferSteps = DefaultKVBufferSteps
	}
	if o.KVEventsFormat == "" {
		o.KVEventsFormat = FormatMap
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
		{"block size", int64(o.BlockSize)},
		{"num blocks", int64(o.NumBlocks)},
		{"prefill chunk", int64(o.PrefillChunk)},
		{"kv buffer steps", int64(o.KVBufferSteps)},
		{"dp rank", int64(o.DPRank)},
		{"event delay", int64(o.EventDelay)},
		{"event jitter", int64(o.EventJitter)},
	} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative", f.name))
		}
	}
	for i, m := range append(append([]string(nil), o.Models...), o.LoRAAdapters...) {
		if m == "" {
			errs = append(errs, fmt.Errorf("model name %d must not be empty", i))
		}
	}
	return errors.Join(append(errs, o.validateCache()...)...)
}

func (o Options) validateCache() []error {
	var errs []error
	if o.EventDropRate < 0 || o.EventDropRate > 1 {
		errs = append(errs, fmt.Errorf("event drop rate must be in [0, 1], got %v", o.EventDropRate))
	}
	if !(o.SilentStoreRate >= 0 && o.SilentStoreRate <= 1) {
		errs = append(errs, fmt.Errorf("silent store rate must be in [0, 1], got %v", o.SilentStoreRate))
	}
	if o.KVEventsFormat != FormatMap && o.KVEventsFormat != FormatArray {
		errs = append(errs, fmt.Errorf("kv events format %q: %w", o.KVEventsFormat, ErrBadEventFormat))
	}
	if o.Role != RoleBoth && o.Role != RolePrefill && o.Role != RoleDecode {
		errs = append(errs, fmt.Errorf("role %q: want prefill, decode or empty (both)", o.Role))
	}
	if o.KVReplayEndpoint != "" && o.KVEventsEndpoint == "" {
		errs = append(errs, errors.New("kv replay endpoint needs a kv events endpoint"))
	}
	return errs
}
