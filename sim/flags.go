package sim

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// BindFlags defines the sim subcommand's flags on fs, writing into o. The
// cost flags default to DefaultTTFT, DefaultPrefillPerToken and
// DefaultDecodePerToken, so a simulator started from the command line queues
// and streams visibly; 0 makes a cost free.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Addr, "addr", DefaultAddr, "listen address")
	fs.StringVar(&o.ID, "id", "", "name in the x-warmroute-served-by response header (default: --addr)")
	fs.Var((*modelsFlag)(&o.Models), "models", "comma-separated model names served (default \""+DefaultModel+"\")")
	fs.DurationVar(&o.TTFT, "ttft", DefaultTTFT, "fixed time to first token, on top of prefill")
	fs.DurationVar(&o.PrefillPerToken, "prefill-per-token", DefaultPrefillPerToken, "prefill time per uncached prompt token")
	fs.DurationVar(&o.DecodePerToken, "decode-per-token", DefaultDecodePerToken, "decode time per generated token after the first")
	fs.IntVar(&o.MaxRunning, "max-running", DefaultMaxRunning, "requests running at once; more wait")
	fs.IntVar(&o.MaxModelLen, "max-model-len", DefaultMaxModelLen, "largest prompt plus max_tokens")
	fs.BoolVar(&o.PromptTokensDetails, "prompt-tokens-details", false, "report usage.prompt_tokens_details.cached_tokens")
	fs.DurationVar(&o.ShutdownGrace, "shutdown-grace", DefaultShutdownGrace, "how long in-flight requests may finish on shutdown")
	fs.StringVar(&o.TokenizerDir, "tokenizer", "", "directory with tokenizer.json (and tokenizer_config.json); default a stand-in word tokenizer")
	fs.StringVar(&o.Role, "role", RoleBoth, "P/D role: prefill, decode (prefill first at the x-prefiller-host-port a request names), or empty for both")
	o.bindCacheFlags(fs)
	o.bindEventFlags(fs)
}

func (o *Options) bindCacheFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.BlockSize, "block-size", DefaultBlockSize, "KV block size in tokens")
	fs.IntVar(&o.NumBlocks, "num-blocks", DefaultNumBlocks, "KV cache capacity in blocks")
	fs.IntVar(&o.PrefillChunk, "prefill-chunk", 0, "prefill step size in tokens (chunked prefill); 0: one step")
	fs.Var((*modelsFlag)(&o.LoRAAdapters), "lora-adapters", "comma-separated LoRA adapter names, served as models")
	fs.Func("engine-seed", "fix the block hash seed (default: random per process, like vLLM)", func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("parsing engine seed %q: %w", v, err)
		}
		o.EngineSeed = &n
		return nil
	})
}

func (o *Options) bindEventFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.KVEventsEndpoint, "kv-events-url", "", "bind a ZMQ PUB socket here for KV events, e.g. tcp://127.0.0.1:5557")
	fs.StringVar(&o.KVReplayEndpoint, "kv-replay-url", "", "bind the KV event replay ROUTER socket here, e.g. tcp://127.0.0.1:5558")
	fs.StringVar(&o.KVEventsTopic, "kv-events-topic", "", "topic frame of every KV event message")
	o.KVEventsFormat = FormatMap
	fs.Var(&o.KVEventsFormat, "kv-events-format", "event layout: map (vLLM >= 0.24) or array (legacy)")
	fs.IntVar(&o.KVBufferSteps, "kv-buffer-steps", DefaultKVBufferSteps, "batches kept for replay")
	fs.IntVar(&o.DPRank, "dp-rank", 0, "data-parallel rank written in every batch")
	fs.DurationVar(&o.EventDelay, "event-delay", 0, "fault: delay every KV event batch")
	fs.DurationVar(&o.EventJitter, "event-jitter", 0, "fault: extra random delay up to this, order preserved")
	fs.Float64Var(&o.EventDropRate, "event-drop-rate", 0, "fault: probability a batch is lost on the wire (0..1)")
	fs.Float64Var(&o.SilentStoreRate, "silent-store-rate", 0, "fault: probability a request answers normally but stores and publishes no block (0..1)")
	fs.Uint64Var(&o.FaultSeed, "fault-seed", 1, "seed of the silent-store draw")
}

// modelsFlag is a comma-separated list of non-empty model names.
type modelsFlag []string

func (m *modelsFlag) String() string {
	if m == nil {
		return ""
	}
	return strings.Join(*m, ",")
}

func (m *modelsFlag) Set(v string) error {
	var names []string
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return fmt.Errorf("parsing models %q: empty model name", v)
		}
		names = append(names, name)
	}
	*m = names
	return nil
}
