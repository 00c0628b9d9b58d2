package index

// expiryQueue is a FIFO of expiry references in a ring buffer: popping
// never copies, and the buffer grows (doubling, one copy) only while the
// shard's live predictions grow, so in steady state a decision never pays
// for moving the queue. The zero value is empty.
type expiryQueue struct {
	buf  []expiryRef // len is a power of two, or 0
	head int         // index of the front
	n    int
}

func (q *expiryQueue) len() int { return q.n }

// front returns the oldest reference; the queue must not be empty.
func (q *expiryQueue) front() expiryRef { return q.buf[q.head] }

func (q *expiryQueue) push(r expiryRef) {
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = r
	q.n++
}

// pop removes and returns the oldest reference; the queue must not be empty.
func (q *expiryQueue) pop() expiryRef {
	r := q.buf[q.head]
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
	return r
}

func (q *expiryQueue) grow() {
	buf := make([]expiryRef, max(64, 2*len(q.buf)))
	for i := range q.n {
		buf[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
	}
	q.buf, q.head = buf, 0
}
