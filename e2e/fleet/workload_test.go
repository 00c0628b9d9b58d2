package fleet

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

func sessionsOf(w Workload, seed uint64, silent float64) []session {
	return w.sessions(rand.New(rand.NewPCG(seed, 1)), silent)
}

func TestWorkloadIsAPureFunctionOfTheSeed(t *testing.T) {
	for _, reg := range Regimes() {
		reg = reg.Scaled(0.1)
		a, b := sessionsOf(reg.Work, 7, reg.SilentFailRate), sessionsOf(reg.Work, 7, reg.SilentFailRate)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two builds from one seed differ", reg.Name)
		}
		if c := sessionsOf(reg.Work, 8, reg.SilentFailRate); reflect.DeepEqual(a, c) {
			t.Errorf("%s: seeds 7 and 8 give the same workload", reg.Name)
		}
	}
}

func TestConversationsExtendTheirHistory(t *testing.T) {
	c := Conversations{Count: 20, Turns: 4, Systems: 2, SystemTokens: 50, MessageTokens: 10,
		StartEvery: 100 * time.Millisecond, ThinkMax: 50 * time.Millisecond}
	ss := sessionsOf(c, 1, 0)
	if len(ss) != 20 {
		t.Fatalf("%d sessions, want 20", len(ss))
	}
	for i, s := range ss {
		if s.Start != time.Duration(i)*100*time.Millisecond || len(s.Turns) != 4 {
			t.Fatalf("session %d: start %v, %d turns", i, s.Start, len(s.Turns))
		}
		for k := 1; k < len(s.Turns); k++ {
			prev, cur := s.Turns[k-1].Tokens, s.Turns[k].Tokens
			if len(cur) != len(prev)+20 || !reflect.DeepEqual(cur[:len(prev)], prev) {
				t.Fatalf("session %d turn %d does not extend the previous prompt by an answer and a message", i, k)
			}
		}
	}
}

func TestGroupsShape(t *testing.T) {
	g := sharers
	g.First = 4
	ss := sessionsOf(g, 3, 0.15)
	if want := g.Docs * (g.First + g.Sharers); len(ss) != want {
		t.Fatalf("%d requests, want %d", len(ss), want)
	}
	silent := 0
	for d := range g.Docs {
		group := ss[d*(g.First+g.Sharers) : (d+1)*(g.First+g.Sharers)]
		doc := len(group[0].Turns[0].Tokens) - g.QuestionTokens
		if doc < g.MinTokens || doc > g.MaxTokens {
			t.Errorf("doc %d: %d tokens, want %d-%d", d, doc, g.MinTokens, g.MaxTokens)
		}
		for i, s := range group {
			p := s.Turns[0].Tokens
			if !reflect.DeepEqual(p[:doc], group[0].Turns[0].Tokens[:doc]) {
				t.Fatalf("doc %d request %d does not share the prefix", d, i)
			}
			if i < g.First && s.Start != group[0].Start {
				t.Errorf("doc %d: first request %d at %v, want simultaneous at %v", d, i, s.Start, group[0].Start)
			}
			if i >= g.First {
				gap := s.Start - group[i-1].Start
				inCluster := gap >= g.ClusterGap[0] && gap <= g.ClusterGap[1]
				inWave := gap >= g.WaveGap[0] && gap <= g.WaveGap[1]
				if !inCluster && !inWave {
					t.Errorf("doc %d request %d: gap %v outside both gap ranges", d, i, gap)
				}
			}
			if s.Turns[0].Silent {
				silent++
			}
		}
	}
	if share := float64(silent) / float64(len(ss)); share < 0.08 || share > 0.25 {
		t.Errorf("silent share %.2f, want about 0.15", share)
	}
}
