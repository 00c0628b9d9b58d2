package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBuildWorkload(t *testing.T) {
	base := workloadSpec{Seed: 7, Conversations: 5, Turns: 3, Systems: 2, SystemWords: 30, MessageWords: 5,
		ThinkMax: 40 * time.Millisecond}
	tests := []struct {
		name  string
		spec  workloadSpec
		convs int
	}{
		{name: "small", spec: base, convs: 5},
		{name: "one turn", spec: func() workloadSpec { s := base; s.Turns = 1; return s }(), convs: 5},
		{name: "one system", spec: func() workloadSpec { s := base; s.Systems = 1; return s }(), convs: 5},
		{name: "no think", spec: func() workloadSpec { s := base; s.ThinkMax = 0; return s }(), convs: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := buildWorkload(tt.spec)
			if len(got) != tt.convs {
				t.Fatalf("got %d conversations, want %d", len(got), tt.convs)
			}
			for _, c := range got {
				checkConversation(t, c, tt.spec)
			}
			if again := buildWorkload(tt.spec); !sameWorkload(got, again) {
				t.Error("the same spec built a different workload")
			}
		})
	}
}

func checkConversation(t *testing.T, c conversation, spec workloadSpec) {
	t.Helper()
	if len(c.Prompts) != spec.Turns || len(c.Think) != spec.Turns || len(c.Fail) != spec.Turns {
		t.Fatalf("conversation %d: %d prompts, %d think times, want %d", c.ID, len(c.Prompts), len(c.Think), spec.Turns)
	}
	if c.System < 0 || c.System >= spec.Systems {
		t.Errorf("conversation %d: system %d out of range", c.ID, c.System)
	}
	for i, p := range c.Prompts {
		if i > 0 && !strings.HasPrefix(p, c.Prompts[i-1]) {
			t.Errorf("conversation %d turn %d does not extend the previous prompt", c.ID, i)
		}
		if c.Think[i] < 0 || c.Think[i] > spec.ThinkMax {
			t.Errorf("conversation %d turn %d: think %s outside [0, %s]", c.ID, i, c.Think[i], spec.ThinkMax)
		}
	}
}

func sameWorkload(a, b []conversation) bool {
	return slices.EqualFunc(a, b, func(x, y conversation) bool {
		return x.ID == y.ID && x.System == y.System && slices.Equal(x.Prompts, y.Prompts) && slices.Equal(x.Think, y.Think)
	})
}

func TestBuildWorkloadSharesSystemPrompts(t *testing.T) {
	spec := workloadSpec{Seed: 1, Conversations: 20, Turns: 2, Systems: 2, SystemWords: 20, MessageWords: 4}
	bySystem := map[int]string{}
	for _, c := range buildWorkload(spec) {
		sys, _, _ := strings.Cut(c.Prompts[0], "\n")
		if prev, ok := bySystem[c.System]; ok && prev != sys {
			t.Fatalf("system %d has two texts", c.System)
		}
		bySystem[c.System] = sys
	}
	if len(bySystem) != 2 {
		t.Errorf("20 conversations used %d of 2 system prompts", len(bySystem))
	}
}

func TestBuildWorkloadSeedMatters(t *testing.T) {
	spec := workloadSpec{Seed: 1, Conversations: 3, Turns: 2, Systems: 2, SystemWords: 20, MessageWords: 4}
	other := spec
	other.Seed = 2
	if sameWorkload(buildWorkload(spec), buildWorkload(other)) {
		t.Error("seeds 1 and 2 built the same workload")
	}
}

func TestBuildWorkloadFailRate(t *testing.T) {
	tests := []struct {
		name     string
		rate     float64
		min, max int // failing turns of 400
	}{
		{name: "none", rate: 0, min: 0, max: 0},
		{name: "some", rate: 0.1, min: 20, max: 60},
		{name: "almost all", rate: 0.99, min: 380, max: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := workloadSpec{Seed: 3, Conversations: 100, Turns: 4, Systems: 1, SystemWords: 5, MessageWords: 2, FailRate: tt.rate}
			n := 0
			for _, c := range buildWorkload(spec) {
				for _, f := range c.Fail {
					if f {
						n++
					}
				}
			}
			if n < tt.min || n > tt.max {
				t.Errorf("%d failing turns, want [%d, %d]", n, tt.min, tt.max)
			}
		})
	}
}
