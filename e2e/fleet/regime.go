package fleet

import (
	"fmt"
	"time"
)

// Latency is one endpoint's event latency: from the moment a chunk's blocks
// are computed to the moment the router's index applies its BlockStored,
// Delay plus a uniform draw in [0, Jitter]. It covers publication, the
// relay, the bus and the subscriber.
type Latency struct {
	Delay, Jitter time.Duration
}

// EventPath is the state of the KV event pipeline during a run.
type EventPath int

// Event path states.
const (
	// Flowing delivers every batch after its endpoint's Latency.
	Flowing EventPath = iota
	// Cut delivers no batch; relays keep sending heartbeats.
	Cut
	// Down delivers nothing at all: no batch, no heartbeat.
	Down
)

// Cost is the engines' cost model, the simulator's: TTFT once per request,
// PrefillPerToken per uncached prompt token (in chunks of PrefillChunk
// tokens, each chunk's blocks cacheable once computed), DecodePerToken per
// generated token after the first.
type Cost struct {
	TTFT, PrefillPerToken, DecodePerToken time.Duration
	MaxRunning, PrefillChunk              int
	// NumBlocks is each engine's cache capacity in blocks (LRU).
	NumBlocks int
	// OutputTokens is generated per request.
	OutputTokens int
}

// Regime is one condition of the fleet and its workload.
type Regime struct {
	Name, About string
	Endpoints   int
	// Latency is per endpoint, cycled when shorter than Endpoints.
	Latency []Latency
	// SilentFailRate is the share of requests that store no block and show
	// the router no error (preempted or aborted after the response started,
	// or cached under an identity the router does not know).
	SilentFailRate float64
	Path           EventPath
	Cost           Cost
	Work           Workload
}

// longEndpoints is the fleet size of the long-prefix regimes: with more
// endpoints, a sharer routed without a live prediction is more likely to land
// on one without the prefix.
const longEndpoints = 6

// BlockSize is the KV block size of every engine and the index.
const BlockSize = 16

// defaultCost is the cost model of the short-prompt regimes: compare's
// simulators (a 400-token miss costs 80 ms more TTFT than a hit).
var defaultCost = Cost{TTFT: 10 * time.Millisecond, PrefillPerToken: 200 * time.Microsecond,
	DecodePerToken: 2 * time.Millisecond, MaxRunning: 8, PrefillChunk: 2048, NumBlocks: 200000, OutputTokens: 32}

// longCost is the cost model of the long-prefix regimes: a faster engine per
// token (a 32k-token prefill takes 1.6 s), chunked prefill of 2048 tokens.
var longCost = Cost{TTFT: 10 * time.Millisecond, PrefillPerToken: 50 * time.Microsecond,
	DecodePerToken: 2 * time.Millisecond, MaxRunning: 8, PrefillChunk: 2048, NumBlocks: 400000, OutputTokens: 32}

var (
	fastLatency = Latency{Delay: 2 * time.Millisecond, Jitter: 3 * time.Millisecond}
	// slowLatency is an event path with p99 about 4 s (1 s + U(0, 3 s)): a
	// prefix's first chunk is confirmed 1-4 s after its route, so a static
	// 2 s prediction often expires first.
	slowLatency = Latency{Delay: time.Second, Jitter: 3 * time.Second}
	midLatency  = Latency{Delay: 150 * time.Millisecond, Jitter: 350 * time.Millisecond}
)

// conversations is today's compare workload: multi-turn chats resending their
// history, four shared system prompts.
var conversations = Conversations{Count: 240, Turns: 4, Systems: 4, SystemTokens: 400,
	MessageTokens: 60, StartEvery: 100 * time.Millisecond, ThinkMax: 50 * time.Millisecond}

// sharers is the long-prefix workload: documents of 8k-32k tokens, each
// read by a group of requests (agent fan-out, RAG over one document) that
// arrive in clusters 100-500 ms apart, the clusters 1.5-4 s apart.
var sharers = Groups{Docs: 24, MinTokens: 8192, MaxTokens: 32768, First: 1, Sharers: 10,
	ClusterShare: 0.6, ClusterGap: [2]time.Duration{100 * time.Millisecond, 500 * time.Millisecond},
	WaveGap: [2]time.Duration{1500 * time.Millisecond, 4 * time.Second}, QuestionTokens: 64,
	DocEvery: [2]time.Duration{2 * time.Second, 4 * time.Second}}

// Regimes lists every regime in report order.
func Regimes() []Regime {
	medium := sharers
	medium.MinTokens, medium.MaxTokens = 2048, 8192
	medium.WaveGap = [2]time.Duration{600 * time.Millisecond, 3 * time.Second}
	burst := sharers
	burst.First, burst.Sharers, burst.Docs = 16, 6, 16
	burst.DocEvery = [2]time.Duration{4 * time.Second, 6 * time.Second}
	return []Regime{
		{Name: "fast", About: "conversations, events in milliseconds", Endpoints: 3,
			Latency: []Latency{fastLatency}, Cost: defaultCost, Work: conversations},
		{Name: "long-prefill", About: fmt.Sprintf("8k-32k-token shared prefixes, chunked prefill, event latency %s+U(0,%s)", slowLatency.Delay, slowLatency.Jitter),
			Endpoints: longEndpoints, Latency: []Latency{slowLatency}, Cost: longCost, Work: sharers},
		{Name: "silent", About: fmt.Sprintf("2k-8k-token shared prefixes, 15%% of requests store nothing silently, event latency %s+U(0,%s)", midLatency.Delay, midLatency.Jitter),
			Endpoints: longEndpoints, Latency: []Latency{midLatency}, SilentFailRate: 0.15, Cost: longCost, Work: medium},
		{Name: "mixed", About: "8k-32k-token shared prefixes, endpoint latencies fast / mid / slow (one slow subscriber), 10% silent failures",
			Endpoints: longEndpoints, Latency: []Latency{fastLatency, midLatency, slowLatency}, SilentFailRate: 0.10, Cost: longCost, Work: sharers},
		{Name: "burst", About: "16 simultaneous first requests per new 8k-32k-token prefix, then 6 sharers", Endpoints: longEndpoints,
			Latency: []Latency{slowLatency}, Cost: longCost, Work: burst},
		{Name: "cut", About: "conversations, engine events cut for the whole run, heartbeats flowing", Endpoints: 3,
			Latency: []Latency{fastLatency}, Path: Cut, Cost: defaultCost, Work: conversations},
		{Name: "relays-down", About: "conversations, no events and no heartbeats", Endpoints: 3,
			Latency: []Latency{fastLatency}, Path: Down, Cost: defaultCost, Work: conversations},
	}
}

// FindRegimes returns the regimes named (all when names is empty), in
// report order.
func FindRegimes(names []string) ([]Regime, error) {
	all := Regimes()
	if len(names) == 0 {
		return all, nil
	}
	var out []Regime
	for _, n := range names {
		found := false
		for _, r := range all {
			if r.Name == n {
				out, found = append(out, r), true
			}
		}
		if !found {
			return nil, fmt.Errorf("finding regime %q: %w", n, ErrUnknown)
		}
	}
	return out, nil
}

// Scaled returns r with its workload shrunk by f (0 < f <= 1), for quick runs.
func (r Regime) Scaled(f float64) Regime {
	r.Work = r.Work.scaled(f)
	return r
}
