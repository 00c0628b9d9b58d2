package scorer

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestPoolsMembership(t *testing.T) {
	type op struct {
		add         bool // else remove
		model, ep   string
		wantChanged bool
	}
	tests := []struct {
		name  string
		ops   []op
		model string   // looked up after the ops
		want  []string // its endpoints; nil with wantErr
		pool  string
	}{
		{"add to configured pool", []op{{true, "llama", "10.0.0.9:80", true}}, "llama",
			[]string{"10.0.0.1:80", "10.0.0.9:80"}, "llama"},
		{"add through alias", []op{{true, "meta/llama", "10.0.0.9:80", true}}, "llama",
			[]string{"10.0.0.1:80", "10.0.0.9:80"}, "llama"},
		{"add twice is one", []op{{true, "llama", "10.0.0.9:80", true}, {true, "llama", "10.0.0.9:80", false}},
			"llama", []string{"10.0.0.1:80", "10.0.0.9:80"}, "llama"},
		{"static endpoint is not re-added", []op{{true, "llama", "10.0.0.1:80", false}}, "llama",
			[]string{"10.0.0.1:80"}, "llama"},
		{"static endpoint is never removed", []op{{true, "llama", "10.0.0.1:80", false},
			{false, "llama", "10.0.0.1:80", false}}, "llama", []string{"10.0.0.1:80"}, "llama"},
		{"dynamic endpoint removed", []op{{true, "llama", "10.0.0.9:80", true},
			{false, "llama", "10.0.0.9:80", true}}, "llama", []string{"10.0.0.1:80"}, "llama"},
		{"remove unknown model", []op{{false, "nope", "10.0.0.9:80", false}}, "llama",
			[]string{"10.0.0.1:80"}, "llama"},
		{"new model gets its own pool", []op{{true, "qwen", "10.0.1.1:80", true}}, "qwen",
			[]string{"10.0.1.1:80"}, "qwen"},
		{"emptied discovered pool stays", []op{{true, "qwen", "10.0.1.1:80", true},
			{false, "qwen", "10.0.1.1:80", true}}, "qwen", []string{}, "qwen"},
		{"empty model ignored", []op{{true, "", "10.0.1.1:80", false}}, "llama", []string{"10.0.0.1:80"}, "llama"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPools([]PoolConfig{{Name: "llama", Models: []string{"meta/llama"},
				Endpoints: []string{"10.0.0.1:80"}}}, "")
			for i, o := range tc.ops {
				change := p.RemoveEndpoint
				if o.add {
					change = p.AddEndpoint
				}
				got := change(o.model, o.ep)
				if got != o.wantChanged {
					t.Fatalf("op %d %+v changed = %v, want %v", i, o, got, o.wantChanged)
				}
			}
			name, eps, err := p.Lookup(tc.model)
			if err != nil || name != tc.pool || !slices.Equal(eps, tc.want) {
				t.Fatalf("Lookup(%q) = %q %v %v, want %q %v", tc.model, name, eps, err, tc.pool, tc.want)
			}
		})
	}
}

func TestPoolsMembershipSnapshotsStayImmutable(t *testing.T) {
	p := NewPools([]PoolConfig{{Name: "m", Endpoints: []string{"10.0.0.1:80", "10.0.0.3:80"}}}, "")
	_, before, _ := p.Lookup("m")
	p.AddEndpoint("m", "10.0.0.2:80")
	p.RemoveEndpoint("m", "10.0.0.2:80")
	if !slices.Equal(before, []string{"10.0.0.1:80", "10.0.0.3:80"}) {
		t.Fatalf("a reader's snapshot changed under it: %v", before)
	}
}

func TestPoolsMembershipUnknownModelStillFails(t *testing.T) {
	p := NewPools(nil, "")
	p.AddEndpoint("qwen", "10.0.1.1:80")
	if _, _, err := p.Lookup("llama"); !errors.Is(err, ErrUnknownModel) {
		t.Fatalf("Lookup(llama) err = %v, want ErrUnknownModel", err)
	}
}

func BenchmarkPoolsAddRemove(b *testing.B) {
	for _, n := range []int{8, 128, 1024} {
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) {
			p := NewPools(nil, "")
			for i := range n {
				p.AddEndpoint("m", benchEndpoint(i))
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				p.RemoveEndpoint("m", benchEndpoint(i%n))
				p.AddEndpoint("m", benchEndpoint(i%n))
			}
		})
	}
}

func benchEndpoint(i int) string { return fmt.Sprintf("10.%d.%d.1:8000", i/256, i%256) }
