package ttl

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// guardRefresh is how long a healthy freshness verdict is reused on the hot
// path, so TTL and Trust ask the event subscriber at most ten times a second
// per healthy endpoint rather than once per request. A paused verdict is
// judged again on every call, so speculation resumes with the first request
// after the stream is fresh again (a router that has just started resumes
// as soon as its relays' first heartbeats arrive, not up to a refresh later).
const guardRefresh = 100 * time.Millisecond

// Pause reasons, for the admin report and logs.
const (
	reasonStale        = "stale"        // no event or heartbeat within the silence limit
	reasonDisconnected = "disconnected" // the relay reports its engine gone
	reasonUnknown      = "unknown"      // the subscriber has never seen the endpoint
	reasonSilent       = "silent"       // routes that should store blocks, and no event since
)

type guardState struct {
	checked atomic.Int64 // ns; 0 never
	paused  atomic.Bool
	reason  atomic.Pointer[string]
	// awaiting is when the oldest route still waiting for an event was
	// committed (ns; 0 none): a route that inserted predictions should make
	// the engine store blocks and publish them.
	awaiting atomic.Int64
	// latest is when the newest such route was committed (ns): when an event
	// answers the oldest wait, a route committed after that event is still
	// waiting, and the wait restarts from it (conservatively: later routes
	// than the first unanswered one).
	latest atomic.Int64
}

// guard is the freshness guard: it pauses speculation for an endpoint whose
// events cannot confirm predictions. A paused endpoint gets TTL 0 and trust
// 0 rather than a longer TTL, because predictions kept alive while
// confirmations cannot arrive only prolong false warm routes.
type guard struct {
	src FreshnessSource
	max int
	m   *Metrics
	log *slog.Logger
	// list, when set, names endpoints to judge every round without traffic.
	list func() []string
	// silentLimit (ns) is how long a route may wait for any event before
	// the silent rule pauses its endpoint, derived from the confirmation
	// latency (setSilentBase); the source's silence limit still caps it.
	silentLimit atomic.Int64

	states sync.Map // endpoint -> *guardState
	mu     sync.Mutex
	n      int
}

func newGuard(src FreshnessSource, list func() []string, maxEndpoints int, m *Metrics, log *slog.Logger) *guard {
	return &guard{src: src, list: list, max: maxEndpoints, m: m, log: log}
}

// Silent-rule timing: a route that inserted predictions should be answered
// by some event from its endpoint within the confirmation latency the TTL
// covers; silentSlack on top keeps a confirmation just past the TTL from
// pausing, and silentFloor keeps a very fast event path from pausing an
// endpoint over scheduling noise.
const (
	silentSlack = 500 * time.Millisecond
	silentFloor = time.Second
)

// setSilentBase derives the silent rule's limit from base, the measured
// confirmation latency's TTL (the advice, or the TTL in force before there
// is advice): base + silentSlack, at least silentFloor.
func (g *guard) setSilentBase(base time.Duration) {
	g.silentLimit.Store(int64(max(base+silentSlack, silentFloor)))
}

// verdict judges one endpoint's stream at now; "" means healthy. st may be
// nil (an endpoint beyond the tracking bound), which skips the silence check.
func (g *guard) verdict(endpoint string, st *guardState, now time.Time) string {
	f, ok := g.src.Freshness(endpoint)
	last := f.LastEvent
	if f.LastHeartbeat.After(last) {
		last = f.LastHeartbeat
	}
	switch {
	case !ok:
		return reasonUnknown
	case !f.Connected:
		return reasonDisconnected
	case last.IsZero() || (f.SilenceLimit > 0 && now.Sub(last) > f.SilenceLimit):
		return reasonStale
	case g.silent(st, f.LastEvent, f.SilenceLimit, now):
		return reasonSilent
	}
	return ""
}

// silent reports whether routes that should have made the engine store new
// blocks have gone unanswered by any event for longer than limit. This
// catches a cut between engine and relay that heartbeats alone hide: the
// relay keeps beating while no event flows. A route whose request failed
// trips it too, which is harmless: routing goes on on load and confirmed
// state, and the next event the endpoint publishes clears it.
func (g *guard) silent(st *guardState, lastEvent time.Time, limit time.Duration, now time.Time) bool {
	if st == nil || limit <= 0 {
		return false
	}
	if d := time.Duration(g.silentLimit.Load()); d > 0 {
		limit = min(limit, d)
	}
	since := st.awaiting.Load()
	if since == 0 {
		return false
	}
	if !lastEvent.IsZero() && lastEvent.UnixNano() >= since {
		next := int64(0) // answered; a newer route may start the wait again
		if l := st.latest.Load(); l > lastEvent.UnixNano() {
			next = l // a route after the answering event still waits
		}
		if !st.awaiting.CompareAndSwap(since, next) || next == 0 {
			return false
		}
		since = next
	}
	return now.UnixNano()-since > int64(limit)
}

// routed notes a committed route to endpoint that inserted predictions, so
// the engine should soon publish the blocks it stores.
func (g *guard) routed(endpoint string, at time.Time) {
	if g.src == nil {
		return
	}
	if st := g.state(endpoint); st != nil {
		ns := at.UnixNano()
		for l := st.latest.Load(); ns > l && !st.latest.CompareAndSwap(l, ns); l = st.latest.Load() {
		}
		st.awaiting.CompareAndSwap(0, ns)
	}
}

// paused reports whether speculation is paused for endpoint at now,
// re-judging a healthy endpoint at most every guardRefresh and a paused one
// every time.
func (g *guard) paused(endpoint string, now time.Time) bool {
	if g.src == nil {
		return false
	}
	st := g.state(endpoint)
	if st == nil { // beyond the bound: judge every time, export nothing
		return g.verdict(endpoint, nil, now) != ""
	}
	if c := st.checked.Load(); c != 0 && now.UnixNano()-c < int64(guardRefresh) && !st.paused.Load() {
		return false
	}
	return g.judge(endpoint, st, now)
}

func (g *guard) judge(endpoint string, st *guardState, now time.Time) bool {
	reason := g.verdict(endpoint, st, now)
	st.checked.Store(now.UnixNano())
	if old := st.reason.Load(); old == nil || *old != reason {
		st.setReason(reason)
	}
	paused := reason != ""
	if st.paused.Swap(paused) != paused {
		g.m.paused.WithLabelValues(endpoint).Set(b2f(paused))
		if paused {
			g.log.Warn("pausing speculation: endpoint's kv events cannot confirm predictions", "endpoint", endpoint, "reason", reason)
		} else {
			g.log.Info("resuming speculation", "endpoint", endpoint)
		}
	}
	return paused
}

// setReason stores a new verdict's reason. It is apart from judge, which
// calls it only when the reason changes, so that re-judging a paused
// endpoint on every request allocates nothing.
func (st *guardState) setReason(reason string) { st.reason.Store(&reason) }

func (g *guard) state(endpoint string) *guardState {
	if v, ok := g.states.Load(endpoint); ok {
		return v.(*guardState)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if v, ok := g.states.Load(endpoint); ok {
		return v.(*guardState)
	}
	if g.n >= g.max {
		return nil
	}
	st := &guardState{}
	g.states.Store(endpoint, st)
	g.n++
	g.m.paused.WithLabelValues(endpoint).Set(0)
	return st
}

// refresh re-judges every known endpoint, so the paused gauge moves even for
// endpoints no request asks about; endpoints the list names are judged (and
// exported) even before any request went there.
func (g *guard) refresh(now time.Time) {
	if g.src == nil {
		return
	}
	if g.list != nil {
		for _, ep := range g.list() {
			g.state(ep)
		}
	}
	g.states.Range(func(k, v any) bool {
		g.judge(k.(string), v.(*guardState), now)
		return true
	})
}

// status reports an endpoint's last verdict without judging again.
func (g *guard) status(endpoint string) (paused bool, reason string) {
	if g.src == nil {
		return false, ""
	}
	v, ok := g.states.Load(endpoint)
	if !ok {
		return false, ""
	}
	st := v.(*guardState)
	if r := st.reason.Load(); r != nil {
		reason = *r
	}
	return st.paused.Load(), reason
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// backlogPeak keeps the highest subscriber backlog sampled over the window:
// J must cover the bursts, not the average.
type backlogPeak struct {
	src   BacklogGauge
	width time.Duration

	mu    sync.Mutex
	marks []sample // decreasing in d: a monotonic queue for a sliding max
}

func newBacklogPeak(src BacklogGauge, width time.Duration) *backlogPeak {
	return &backlogPeak{src: src, width: width}
}

// sample reads the gauge at now and returns the peak over the window.
func (b *backlogPeak) sample(now time.Time) time.Duration {
	if b.src == nil {
		return 0
	}
	d := max(b.src.Backlog(), 0)
	at := now.UnixNano()
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.marks) > 0 && b.marks[len(b.marks)-1].d <= d {
		b.marks = b.marks[:len(b.marks)-1]
	}
	b.marks = append(b.marks, sample{at, d})
	for b.marks[0].at <= at-int64(b.width) {
		b.marks = b.marks[1:]
	}
	return b.marks[0].d
}

// peak returns the last computed peak without sampling.
func (b *backlogPeak) peak() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.marks) == 0 {
		return 0
	}
	return b.marks[0].d
}
