package gapsweep

import (
	"flag"
	"fmt"
	"strings"
)

// BindFlags defines the validate flags on fs, writing into o. Identity
// flags (--model, --lora, --cache-salt) may be given once each: a second,
// different value is refused, so one sweep never mixes cache identities.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Target, "target-url", "", "Envoy base URL the requests go to, e.g. http://envoy:8080 (required)")
	fs.StringVar(&o.Debug, "debug-url", "", "router debug base URL (its debugAddr), for the TTL report and block size")
	fs.Var(&identityFlag{name: "model", v: &o.Model}, "model", "model name (required; one per sweep)")
	fs.Var(&identityFlag{name: "lora", v: &o.LoRA}, "lora", "LoRA adapter sent as the model (one per sweep)")
	fs.Var(&identityFlag{name: "cache-salt", v: &o.CacheSalt}, "cache-salt", "cache_salt sent with every request (one per sweep)")
	fs.IntVar(&o.BlockSize, "block-size", 0, "KV block size in tokens (default: the router's, from --debug-url)")
	fs.IntVar(&o.PrefixWords, "prefix-words", DefaultPrefixWords, "shared prefix length in words (about one token each)")
	fs.IntVar(&o.SuffixWords, "suffix-words", DefaultSuffixWords, "differing suffix length in words")
	fs.Var((*gapsFlag)(&o.Gaps), "gaps", "comma-separated gaps, e.g. 50ms,400ms,1.8s,2.5s (default: from --debug-url's TTL report)")
	fs.IntVar(&o.PairsPerGap, "pairs", DefaultPairsPerGap, "pairs per gap")
	fs.IntVar(&o.MaxRequests, "max-requests", DefaultMaxRequests, "refuse a sweep that would send more requests")
	fs.DurationVar(&o.Deadline, "deadline", DefaultDeadline, "stop the sweep after this long and report what was measured")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", DefaultRequestTimeout, "give up on one request after this long")
	fs.IntVar(&o.MaxTokens, "max-tokens", DefaultMaxTokens, "max_tokens of every request")
	fs.StringVar(&o.Path, "path", DefaultPath, "completion path on the target")
	o.Fault = FaultNone
	fs.Var(&o.Fault, "first-request-fault", "fault for the first request of each pair: none, fail-prefill or cancel")
	fs.Int64Var(&o.Seed, "seed", 0, "seed for the prompt words (0: random)")
}

// identityFlag is a string flag that can be set once: a different second
// value is an error rather than a silent override.
type identityFlag struct {
	name string
	v    *string
	set  bool
}

func (f *identityFlag) String() string {
	if f == nil || f.v == nil {
		return ""
	}
	return *f.v
}

func (f *identityFlag) Set(v string) error {
	v = strings.TrimSpace(v)
	if strings.Contains(v, ",") {
		return fmt.Errorf("--%s %q: one value per sweep, not a list: %w", f.name, v, ErrIdentity)
	}
	if f.set && v != *f.v {
		return fmt.Errorf("--%s given as %q and %q: %w", f.name, *f.v, v, ErrIdentity)
	}
	*f.v, f.set = v, true
	return nil
}

// gapsFlag parses --gaps.
type gapsFlag []Gap

func (g *gapsFlag) String() string {
	if g == nil {
		return ""
	}
	parts := make([]string, len(*g))
	for i, x := range *g {
		parts[i] = x.D.String()
	}
	return strings.Join(parts, ",")
}

func (g *gapsFlag) Set(v string) error {
	gaps, err := ParseGaps(v)
	if err != nil {
		return err
	}
	*g = gaps
	return nil
}
