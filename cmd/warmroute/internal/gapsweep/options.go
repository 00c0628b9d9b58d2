package gapsweep

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Defaults for zero Options fields.
const (
	// DefaultPrefixWords gives a prefix of several hundred tokens: many
	// 16-token blocks, so a one-block boundary effect at the suffix does not
	// blur the matched length.
	DefaultPrefixWords    = 400
	DefaultSuffixWords    = 6
	DefaultPairsPerGap    = 3
	DefaultMaxRequests    = 200
	DefaultDeadline       = 5 * time.Minute
	DefaultRequestTimeout = 60 * time.Second
	DefaultMaxTokens      = 4
	DefaultPath           = "/v1/completions"
)

// Fault is what the first request of every pair asks the simulator for.
type Fault string

// Faults. FaultNone sends the first request normally; FaultFailPrefill adds
// the simulator's x-sim-fail-prefill header, so it fails before any block is
// stored; FaultCancel has the client cancel it right after the response
// headers arrive.
const (
	FaultNone        Fault = "none"
	FaultFailPrefill Fault = "fail-prefill"
	FaultCancel      Fault = "cancel"
)

// Set implements flag.Value.
func (f *Fault) Set(v string) error {
	switch Fault(v) {
	case FaultNone, FaultFailPrefill, FaultCancel:
		*f = Fault(v)
		return nil
	}
	return fmt.Errorf("parsing fault %q: want none, fail-prefill or cancel: %w", v, ErrOptions)
}

func (f *Fault) String() string { return string(*f) }

// Options configures a sweep. Target and Model are required; every zero
// field gets its default (Fault "" means FaultNone). Gaps empty means "from
// the debug endpoint's TTL report"; BlockSize 0 means "from the debug
// endpoint".
type Options struct {
	Target         string // Envoy's base URL
	Debug          string // router debug base URL; "" when not reachable
	Model          string
	LoRA           string // adapter name sent as the model, when set
	CacheSalt      string
	BlockSize      int
	PrefixWords    int
	SuffixWords    int
	Gaps           []Gap
	PairsPerGap    int
	MaxRequests    int
	Deadline       time.Duration
	RequestTimeout time.Duration
	MaxTokens      int
	Path           string
	Fault          Fault
	// Seed fixes the prompt words for reproducible prompts; nonces stay
	// random so a rerun never hits an earlier run's cache.
	Seed int64
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.PrefixWords, DefaultPrefixWords)
	def(&o.SuffixWords, DefaultSuffixWords)
	def(&o.PairsPerGap, DefaultPairsPerGap)
	def(&o.MaxRequests, DefaultMaxRequests)
	def(&o.MaxTokens, DefaultMaxTokens)
	if o.Deadline == 0 {
		o.Deadline = DefaultDeadline
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.Path == "" {
		o.Path = DefaultPath
	}
	if o.Fault == "" {
		o.Fault = FaultNone
	}
	return o
}

// Validate reports every problem with o (after WithDefaults).
func (o Options) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format+": %w", append(args, ErrOptions)...))
	}
	if err := checkURL(o.Target); err != nil {
		bad("target %q: %v", o.Target, err)
	}
	if o.Debug != "" {
		if err := checkURL(o.Debug); err != nil {
			bad("debug url %q: %v", o.Debug, err)
		}
	}
	if o.Model == "" {
		bad("model is required")
	}
	if o.BlockSize < 0 || o.PrefixWords < 0 || o.SuffixWords < 0 || o.PairsPerGap < 0 || o.MaxRequests < 0 || o.MaxTokens < 0 {
		bad("block size, word counts, pairs, request budget and max tokens must not be negative")
	}
	if o.Deadline < 0 || o.RequestTimeout < 0 {
		bad("deadline and request timeout must not be negative")
	}
	if o.Debug == "" && o.BlockSize == 0 {
		bad("block size unknown: give --block-size or --debug-url")
	}
	if o.Debug == "" && len(o.Gaps) == 0 {
		bad("no gaps: give --gaps or --debug-url")
	}
	for _, g := range o.Gaps {
		if g.D < 0 {
			bad("gap %s is negative", g.D)
		}
	}
	return errors.Join(errs...)
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return errors.New("want http(s)://host:port")
	}
	return nil
}

// RequestModel is the model name the requests carry: the LoRA adapter when
// one is set, as OpenAI-compatible servers select adapters by model name.
func (o Options) RequestModel() string {
	if o.LoRA != "" {
		return o.LoRA
	}
	return o.Model
}

// trimBase drops a trailing slash so paths can be appended.
func trimBase(u string) string { return strings.TrimRight(u, "/") }
