package fleet

import (
	"math/rand/v2"
	"time"
)

// Workload makes a run's requests from its seed: a pure function, so every
// policy of a (regime, seed) cell sees the very same prompts and failures.
type Workload interface {
	sessions(rng *rand.Rand, silentRate float64) []session
	scaled(f float64) Workload
}

// session is a sequence of requests: each turn is sent Think after the
// previous one's response ended (a closed loop, like a chat client).
type session struct {
	Start time.Duration
	Turns []turn
}

type turn struct {
	Tokens []uint32
	Think  time.Duration
	// Silent makes the request store no block, without error.
	Silent bool
}

// Conversations are multi-turn chats: each turn resends the history (system
// prompt, previous messages and answers) plus a new message. Sessions start
// every StartEvery.
type Conversations struct {
	Count, Turns, Systems, SystemTokens, MessageTokens int
	StartEvery, ThinkMax                               time.Duration
}

func (c Conversations) scaled(f float64) Workload {
	c.Count = max(1, int(float64(c.Count)*f))
	return c
}

func (c Conversations) sessions(rng *rand.Rand, silentRate float64) []session {
	systems := make([][]uint32, c.Systems)
	for i := range systems {
		systems[i] = randomTokens(rng, c.SystemTokens)
	}
	out := make([]session, c.Count)
	for i := range out {
		history := append([]uint32(nil), systems[rng.IntN(c.Systems)]...)
		s := session{Start: time.Duration(i) * c.StartEvery}
		for t := range c.Turns {
			if t > 0 {
				history = append(history, randomTokens(rng, c.MessageTokens)...) // the previous answer
			}
			history = append(history, randomTokens(rng, c.MessageTokens)...)
			s.Turns = append(s.Turns, turn{Tokens: append([]uint32(nil), history...),
				Think: time.Duration(rng.Int64N(int64(c.ThinkMax) + 1)), Silent: rng.Float64() < silentRate})
		}
		out[i] = s
	}
	return out
}

// Groups are requests sharing a long document prefix, each with its own
// question: document d starts DocEvery after d-1 with First simultaneous
// requests, then Sharers more, each gap drawn from ClusterGap with
// probability ClusterShare and from WaveGap otherwise. Every request is its
// own session (open loop).
type Groups struct {
	Docs, MinTokens, MaxTokens, First, Sharers, QuestionTokens int
	ClusterShare                                               float64
	ClusterGap, WaveGap, DocEvery                              [2]time.Duration
}

func (g Groups) scaled(f float64) Workload {
	g.Docs = max(1, int(float64(g.Docs)*f))
	return g
}

func (g Groups) sessions(rng *rand.Rand, silentRate float64) []session {
	var out []session
	var start time.Duration
	for range g.Docs {
		doc := randomTokens(rng, g.MinTokens+rng.IntN(g.MaxTokens-g.MinTokens+1))
		ask := func(at time.Duration) {
			p := append(append([]uint32(nil), doc...), randomTokens(rng, g.QuestionTokens)...)
			out = append(out, session{Start: at, Turns: []turn{{Tokens: p, Silent: rng.Float64() < silentRate}}})
		}
		for range g.First {
			ask(start)
		}
		at := start
		for range g.Sharers {
			gap := g.WaveGap
			if rng.Float64() < g.ClusterShare {
				gap = g.ClusterGap
			}
			at += uniform(rng, gap)
			ask(at)
		}
		start += uniform(rng, g.DocEvery)
	}
	return out
}

func uniform(rng *rand.Rand, r [2]time.Duration) time.Duration {
	return r[0] + time.Duration(rng.Int64N(int64(r[1]-r[0])+1))
}

// randomTokens draws n token ids from a 150k vocabulary, clear of the low
// ids tokenizers reserve.
func randomTokens(rng *rand.Rand, n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = 1000 + rng.Uint32N(150000)
	}
	return out
}
