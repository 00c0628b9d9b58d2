package ttl

import (
	"sync"
	"time"

	"github.com/warmroute/warmroute/index"
)

const decisionShards = 16

// decision is the lifecycle of one routing decision: its Route and how many
// of its speculative blocks have ended, and how.
type decision struct {
	route     Route
	s         *series
	class     promptClass
	ended     int // blocks ended any way
	confirmed int // blocks confirmed, on time or late
	stale     int
	last      time.Duration // latency of the latest confirmation
	lastLate  bool
	lifeOpen  bool // some of NewSpeculative blocks have not ended
	usageWait bool // the route used a prediction and its usage has not come
	lifeEnd   int64
	usageEnd  int64
}

// deadline queues one decision's forgetting. Deadlines are appended in
// nearly increasing order (decision time plus a constant), so a FIFO is
// enough; one queue per kind keeps the long usage wait from holding up the
// short lifecycle one.
type deadline struct {
	id index.DecisionID
	at int64
}

type fifo struct {
	q    []deadline
	head int
}

func (f *fifo) push(d deadline) { f.q = append(f.q, d) }

// pop returns the next deadline at or before now.
func (f *fifo) pop(now int64) (deadline, bool) {
	if f.head == len(f.q) || f.q[f.head].at > now {
		return deadline{}, false
	}
	d := f.q[f.head]
	f.head++
	if f.head > 1024 && f.head*2 > len(f.q) {
		f.q = append(f.q[:0], f.q[f.head:]...)
		f.head = 0
	}
	return d, true
}

// decisionShard is a single-threaded table behind its own mutex.
type decisionShard struct {
	mu    sync.Mutex
	byID  map[index.DecisionID]*decision
	life  fifo // lifecycle deadlines: At + MaxStale + Grace + margin
	usage fifo // usage deadlines: lifecycle deadline + UsageTimeout
}

// expired is what a sweep forgot: decisions whose blocks had not all ended
// (the index never reported them) and speculative routes whose usage never
// came.
type expired struct {
	unfinished int
	noUsage    []*decision
}

// sweep forgets what is past its deadline at now.
func (sh *decisionShard) sweep(now int64, out *expired) {
	for {
		dl, ok := sh.life.pop(now)
		if !ok {
			break
		}
		d := sh.byID[dl.id]
		if d == nil || !d.lifeOpen || d.lifeEnd != dl.at {
			continue // finished, or the id was reused by a later decision
		}
		d.lifeOpen = false
		out.unfinished++
		sh.forgetOrWait(dl.id, d)
	}
	for {
		dl, ok := sh.usage.pop(now)
		if !ok {
			return
		}
		if d := sh.byID[dl.id]; d != nil && d.usageWait && d.usageEnd == dl.at {
			d.usageWait = false
			delete(sh.byID, dl.id)
			out.noUsage = append(out.noUsage, d)
		}
	}
}

// forgetOrWait removes a decision whose lifecycle is over, unless it still
// waits for usage, in which case it is queued for the usage deadline.
func (sh *decisionShard) forgetOrWait(id index.DecisionID, d *decision) {
	if d.usageWait {
		sh.usage.push(deadline{id, d.usageEnd})
		return
	}
	delete(sh.byID, id)
}
