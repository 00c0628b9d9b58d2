package affinity

import (
	"slices"
	"sync"
	"time"

	"github.com/warmroute/warmroute/scorer"
)

// Store is the response-id table of every pool. Build it with New; it
// implements scorer.Affinity. Safe for concurrent use.
type Store struct {
	maxAge     time.Duration
	maxEntries int
	now        func() time.Time
	metrics    *Metrics
	// started is when the table's window starts: it holds every id learnt
	// since (New's time, moved back by a replay that covers more).
	started time.Time
	// published, when set, hears each locally learnt id (the Share).
	published func(pool, id, endpoint string, at time.Time)
	// gap, when set, reports the last time the table may have missed
	// another replica's ids (the Share: NATS down or reconnected).
	gap func(now time.Time) time.Time

	mu    sync.Mutex
	pools map[string]*table
}

type entry struct {
	endpoint string
	at       time.Time
	// gone is set once the endpoint's engine restarted after storing the
	// response: the id is answered as not found until it ages out.
	gone bool
}

// table is one pool's ids; queue holds them in the order learnt, the oldest
// at head, so age and room evictions pop from the front.
type table struct {
	byID  map[string]entry
	queue []queued
	head  int
	// lastRoomEviction is when an id was last evicted for room: until
	// MaxAge after it, the table may be missing ids of the window.
	lastRoomEviction time.Time
}

type queued struct {
	id string
	at time.Time
}

// Options configure a Store beyond its Config.
type Options struct {
	Limits Limits
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Metrics count lookups, learnt ids and evictions; nil counts nothing.
	Metrics *Metrics
}

// New returns an empty store. Its window starts now: an unknown id is
// answered as unsure until MaxAge has passed.
func New(cfg Config, opts Options) *Store {
	cfg = cfg.WithDefaults()
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Limits.MaxEntries <= 0 {
		opts.Limits = DefaultLimits
	}
	if opts.Metrics == nil {
		opts.Metrics, _ = NewMetrics(nil) // nothing to register, so no error
	}
	s := &Store{maxAge: cfg.MaxAge.D(), maxEntries: opts.Limits.MaxEntries, now: opts.Now,
		metrics: opts.Metrics, pools: map[string]*table{}}
	s.started = s.now()
	opts.Metrics.bindStore(s)
	return s
}

// Stored records a locally learnt id and hands it to the share, if any.
func (s *Store) Stored(pool, id, endpoint string) {
	at := s.now()
	if s.record(pool, id, endpoint, at) {
		s.metrics.learned.WithLabelValues("local").Inc()
		if s.published != nil {
			s.published(pool, id, endpoint, at)
		}
	}
}

// Remote records an id another replica learnt at at. An id older than
// MaxAge is dropped; it reports whether the id was recorded.
func (s *Store) Remote(pool, id, endpoint string, at time.Time) bool {
	return s.learnRemote(pool, id, endpoint, at, "remote")
}

// Replayed records an id replayed from the affinity stream at start-up,
// like Remote; it reports whether the id was recorded.
func (s *Store) Replayed(pool, id, endpoint string, at time.Time) bool {
	return s.learnRemote(pool, id, endpoint, at, "replay")
}

// learnRemote records another replica's id unless older than MaxAge,
// counting it under source.
func (s *Store) learnRemote(pool, id, endpoint string, at time.Time, source string) bool {
	if s.now().Sub(at) >= s.maxAge || !s.record(pool, id, endpoint, at) {
		return false
	}
	s.metrics.learned.WithLabelValues(source).Inc()
	return true
}

// coveredSince moves the window's start back to from: a replay found that
// the table now holds every id learnt since then. A later time changes
// nothing.
func (s *Store) coveredSince(from time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if from.Before(s.started) {
		s.started = from
	}
}

// record inserts id, or replaces a known id's endpoint when at is later
// (an id's latest endpoint wins, whatever order messages arrive in); it
// reports whether anything changed.
func (s *Store) record(pool, id, endpoint string, at time.Time) bool {
	if pool == "" || id == "" || endpoint == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.pools[pool]
	if t == nil {
		t = &table{byID: map[string]entry{}}
		s.pools[pool] = t
	}
	if e, ok := t.byID[id]; ok {
		if !at.After(e.at) || e.endpoint == endpoint {
			return false
		}
		// The queued entry of the old time no longer matches (popLocked
		// skips it); the id is queued again at its new time.
		t.byID[id] = entry{endpoint: endpoint, at: at}
		t.queue = append(t.queue, queued{id: id, at: at})
		return true
	}
	s.evictLocked(t, s.now())
	if len(t.byID) >= s.maxEntries {
		s.popLocked(t)
		t.lastRoomEviction = s.now()
		s.metrics.evicted.WithLabelValues("room").Inc()
	}
	t.byID[id] = entry{endpoint: endpoint, at: at}
	t.queue = append(t.queue, queued{id: id, at: at})
	return true
}

// evictLocked drops ids older than MaxAge from the front of the queue.
// Remote ids may arrive slightly out of order; one older than the front
// waits until it reaches the front, and Lookup ignores it once expired.
func (s *Store) evictLocked(t *table, now time.Time) {
	for t.head < len(t.queue) && now.Sub(t.queue[t.head].at) >= s.maxAge {
		if s.popLocked(t) {
			s.metrics.evicted.WithLabelValues("age").Inc()
		}
	}
}

// popLocked removes the oldest queued id, reporting whether it was still
// in the table, and compacts the queue once half of it is popped.
func (s *Store) popLocked(t *table) bool {
	for t.head < len(t.queue) {
		q := t.queue[t.head]
		t.queue[t.head] = queued{}
		t.head++
		if e, ok := t.byID[q.id]; ok && e.at.Equal(q.at) {
			delete(t.byID, q.id)
			s.compactLocked(t)
			return true
		}
	}
	s.compactLocked(t)
	return false
}

func (s *Store) compactLocked(t *table) {
	if t.head > len(t.queue)/2 && t.head > 64 {
		t.queue = slices.Clip(append(t.queue[:0], t.queue[t.head:]...))
		t.head = 0
	}
}

// Lookup implements scorer.Affinity: a known id whose endpoint is among the
// live candidates is a hit, one whose endpoint is not is endpoint_down; an
// unknown id is unknown when the table is complete, else unsure.
func (s *Store) Lookup(pool, id string, candidates []string) (string, scorer.AffinityResult) {
	now := s.now()
	s.mu.Lock()
	t := s.pools[pool]
	var e entry
	var ok, complete bool
	if t != nil {
		s.evictLocked(t, now)
		e, ok = t.byID[id]
		if ok && now.Sub(e.at) >= s.maxAge {
			ok = false
		}
	}
	complete = now.Sub(s.started) >= s.maxAge && (t == nil || t.lastRoomEviction.IsZero() ||
		now.Sub(t.lastRoomEviction) >= s.maxAge)
	s.mu.Unlock()
	if complete && s.gap != nil {
		if g := s.gap(now); !g.IsZero() && now.Sub(g) < s.maxAge {
			complete = false
		}
	}
	r := scorer.AffinityUnsure
	switch {
	case ok && e.gone:
		r = scorer.AffinityUnknown
	case ok && slices.Contains(candidates, e.endpoint):
		r = scorer.AffinityHit
	case ok:
		r = scorer.AffinityEndpointDown
	case complete:
		r = scorer.AffinityUnknown
	}
	s.metrics.lookups[r].Inc()
	if r == scorer.AffinityHit {
		return e.endpoint, r
	}
	return "", r
}

// EngineRestarted marks every id endpoint's engine stored before now as
// gone: vLLM keeps stored responses in process memory, so a restarted
// engine (seen by its relay, even if never seen down) answers them as not
// found, and so does the router from now on, without a trip to the engine.
// Ids learnt later are the new engine's.
func (s *Store) EngineRestarted(endpoint string) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.pools {
		for id, e := range t.byID {
			if e.endpoint == endpoint && !e.gone && !e.at.After(now) {
				e.gone = true
				t.byID[id] = e
				s.metrics.evicted.WithLabelValues("restart").Inc()
			}
		}
	}
}

// Len returns the number of ids kept over all pools.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, t := range s.pools {
		n += len(t.byID)
	}
	return n
}
