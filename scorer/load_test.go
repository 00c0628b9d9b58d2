package scorer

import (
	"slices"
	"testing"
)

func TestLoadReadCached(t *testing.T) {
	var l Load
	var r loadRefs
	snap := []string{"a", "b", "c"}
	inflight := func(s []loadSample) []int64 {
		var out []int64
		for _, x := range s {
			out = append(out, x.inflight)
		}
		return out
	}
	steps := []struct {
		name  string
		do    func()
		names []string
		want  []int64
	}{
		{"no counters yet", func() {}, snap, []int64{0, 0, 0}},
		{"a counter the first read created", func() { l.add("b", 2) }, snap, []int64{0, 2, 0}},
		{"cached counters follow later adds", func() { l.add("b", -1); l.add("a", 5) }, snap, []int64{5, 1, 0}},
		{"another snapshot with other names", func() {}, []string{"c", "a"}, []int64{0, 5}},
		{"an equal copy of the first snapshot", func() { l.add("c", 3) }, slices.Clone(snap), []int64{5, 1, 3}},
	}
	var dst []loadSample
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.do()
			dst = l.readCached(st.names, &r, dst)
			if got := inflight(dst); !slices.Equal(got, st.want) {
				t.Fatalf("in flight = %v, want %v", got, st.want)
			}
			for _, name := range st.names {
				if l.byEnd[name] == nil {
					t.Fatalf("%s has no counter after a read", name)
				}
			}
		})
	}
}
