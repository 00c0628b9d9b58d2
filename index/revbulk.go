package index

// putAll puts every entry of s, in order (a later entry for the same hash
// wins, as with put one by one). A large batch is first grouped by part and
// by the top bits of its home slot (one counting-sort pass), so the inserts
// walk each part's array in memory order instead of missing the cache on
// almost every put: at a million entries that is several times quicker.
// s is left reordered.
func (t *revTable) putAll(s []revSlot) {
	if len(s) < bulkMin {
		for _, e := range s {
			t.put(e.hash, e.key)
		}
		return
	}
	t.reserve(t.len() + len(s))
	var count [revParts << bulkBits]int
	bucket := func(h uint64) uint64 {
		m := mix(h)
		return (m>>32)&(revParts-1)<<bulkBits | m>>(64-bulkBits)
	}
	for i := range s {
		count[bucket(s[i].hash)]++
	}
	sum := 0
	for b, c := range count {
		count[b] = sum
		sum += c
	}
	sorted := make([]revSlot, len(s))
	for _, e := range s { // stable, so a later entry for a hash still comes later
		b := bucket(e.hash)
		sorted[count[b]] = e
		count[b]++
	}
	for _, e := range sorted {
		t.put(e.hash, e.key)
	}
}

const (
	// bulkMin is the batch below which sorting first does not pay.
	bulkMin = 1 << 12
	// bulkBits of the home slot group a part's entries: 256 groups of a
	// few kilobytes each at a million entries.
	bulkBits = 8
)
