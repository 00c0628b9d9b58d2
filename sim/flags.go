package sim

import (
	"flag"
	"fmt"
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
