package index

import "testing"

// TestExpiryQueueFIFO pushes and pops across the ring's wrap and through
// growths and checks the order against a plain slice.
func TestExpiryQueueFIFO(t *testing.T) {
	tests := []struct {
		name       string
		push, pops []int // per round: references pushed, then popped
	}{
		{name: "fill then drain", push: []int{200}, pops: []int{200}},
		{name: "wrap without growth", push: []int{40, 40, 40, 40}, pops: []int{30, 40, 40, 50}},
		{name: "grow while wrapped", push: []int{50, 60, 200, 10}, pops: []int{45, 10, 100, 165}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q expiryQueue
			var want []expiryRef
			next := int64(0)
			for round := range tt.push {
				for range tt.push[round] {
					r := expiryRef{key: Key(next), endpoint: uint32(next), expires: next}
					q.push(r)
					want = append(want, r)
					next++
				}
				for range tt.pops[round] {
					if q.len() != len(want) {
						t.Fatalf("len %d, want %d", q.len(), len(want))
					}
					if got := q.front(); got != want[0] {
						t.Fatalf("front %+v, want %+v", got, want[0])
					}
					if got := q.pop(); got != want[0] {
						t.Fatalf("pop %+v, want %+v", got, want[0])
					}
					want = want[1:]
				}
			}
			if q.len() != len(want) {
				t.Fatalf("left %d, want %d", q.len(), len(want))
			}
		})
	}
}
