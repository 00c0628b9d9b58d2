package main

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// vocabulary is the word list prompts are drawn from. Plain lowercase words
// keep token counts predictable (about one token per word with the Qwen3
// tokenizer) without depending on any corpus.
var vocabulary = strings.Fields(`the a cache router prefix model token block engine request reply
system user assistant latency event index pool endpoint load prefill decode stream batch queue policy
time window sample percentile budget cluster node replica service answer question summary detail
please explain compare describe list write check count measure report table value result error
fast slow small large first last next other same new old good short long simple clear exact
because while after before during until since when where which what how why who`)

// workloadSpec sizes the conversation workload. Every field must be positive.
type workloadSpec struct {
	Seed          uint64
	Conversations int
	Turns         int // requests per conversation
	Systems       int // distinct system prompts shared across users
	SystemWords   int
	MessageWords  int // per user message and per assistant reply
	// FailRate is the share of turns whose first attempt fails during
	// prefill (the simulator stores nothing) and is retried at once: the
	// failed predictions a speculative index has to live with.
	FailRate float64
	// ThinkMax bounds the pause after each answer (uniform in [0, ThinkMax]).
	ThinkMax time.Duration
}

// conversation is one user's turns; turn k's prompt extends turn k-1's, as a
// chat client resends the whole history.
type conversation struct {
	ID      int
	System  int
	Prompts []string
	Think   []time.Duration // after each turn
	Fail    []bool          // the turn's first attempt fails
}

// buildWorkload makes the conversations of spec. It is a pure function of
// spec, so two runs (and two policies) see the very same prompts.
func buildWorkload(spec workloadSpec) []conversation {
	rng := rand.New(rand.NewPCG(spec.Seed, 0x5eed))
	systems := make([]string, spec.Systems)
	for i := range systems {
		systems[i] = "System: you are helpful assistant number " + strconv.Itoa(i) + ". " + words(rng, spec.SystemWords) + "\n"
	}
	convs := make([]conversation, spec.Conversations)
	for c := range convs {
		sys := rng.IntN(spec.Systems)
		var b strings.Builder
		b.WriteString(systems[sys])
		prompts := make([]string, spec.Turns)
		think := make([]time.Duration, spec.Turns)
		fail := make([]bool, spec.Turns)
		for t := range prompts {
			if t > 0 {
				b.WriteString(" " + words(rng, spec.MessageWords) + "\n")
			}
			b.WriteString("User " + strconv.Itoa(c) + ": " + words(rng, spec.MessageWords) + "\nAssistant:")
			prompts[t] = b.String()
			think[t] = time.Duration(rng.Int64N(int64(spec.ThinkMax) + 1))
			fail[t] = rng.Float64() < spec.FailRate
		}
		convs[c] = conversation{ID: c, System: sys, Prompts: prompts, Think: think, Fail: fail}
	}
	return convs
}

func words(rng *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = vocabulary[rng.IntN(len(vocabulary))]
	}
	return strings.Join(w, " ")
}
