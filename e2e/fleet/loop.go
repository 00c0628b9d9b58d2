package fleet

import (
	"container/heap"
	"time"
)

// epoch is virtual time zero: fixed, so runs are reproducible.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// loop is a discrete-event loop on a virtual clock. Events at the same time
// run in the order they were scheduled.
type loop struct {
	now time.Duration
	q   eventQueue
	seq uint64
}

type event struct {
	at  time.Duration
	seq uint64
	fn  func()
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// clock is the loop's time as a wall-clock instant, for the router's Now.
func (l *loop) clock() time.Time { return epoch.Add(l.now) }

// at schedules fn at virtual time t (never in the past).
func (l *loop) at(t time.Duration, fn func()) {
	t = max(t, l.now)
	l.seq++
	heap.Push(&l.q, event{at: t, seq: l.seq, fn: fn})
}

// after schedules fn d from now.
func (l *loop) after(d time.Duration, fn func()) { l.at(l.now+d, fn) }

// run executes events until none is left or the next is after until.
func (l *loop) run(until time.Duration) {
	for l.q.Len() > 0 {
		if l.q[0].at > until {
			return
		}
		e := heap.Pop(&l.q).(event)
		l.now = e.at
		e.fn()
	}
}
