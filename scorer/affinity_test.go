package scorer

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// mapAffinity is an Affinity over a fixed map, judging liveness as the
// affinity package does.
type mapAffinity struct {
	ids      map[string]string
	complete bool
	stored   []string
}

func (a *mapAffinity) Lookup(_, id string, candidates []string) (string, AffinityResult) {
	ep, ok := a.ids[id]
	switch {
	case ok && slices.Contains(candidates, ep):
		return ep, AffinityHit
	case ok:
		return "", AffinityEndpointDown
	case a.complete:
		return "", AffinityUnknown
	}
	return "", AffinityUnsure
}

func (a *mapAffinity) Stored(pool, id, endpoint string) {
	a.stored = append(a.stored, pool+"/"+id+"@"+endpoint)
}

// TestPickByAffinity: a previous_response_id follows its endpoint while it
// is live, is vLLM's not-found when it cannot be reached, and routes on load
// (never on its partial prompt) when unknown to an incomplete table.
func TestPickByAffinity(t *testing.T) {
	const holder = "10.0.0.2:8000"
	for _, tt := range []struct {
		name     string
		aff      *mapAffinity
		down     string
		id       string
		wantEP   string
		wantErr  string
		wantNote string
	}{
		{"hit", &mapAffinity{ids: map[string]string{"r1": holder}}, "", "r1", holder, "", "previous_response=hit"},
		{"endpoint down", &mapAffinity{ids: map[string]string{"r1": holder}}, holder, "r1", "", "Response with id 'r1' not found (the engine that stored it is down).", ""},
		{"unknown, complete", &mapAffinity{complete: true}, "", "r9", "", "Response with id 'r9' not found.", ""},
		{"unknown, unsure", &mapAffinity{}, "", "r9", "", "", "previous_response=unsure"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lv := &downSet{down: map[string]string{}}
			if tt.down != "" {
				lv.set(tt.down, "disconnected")
			}
			s := New(NewPools(pipePools, ""), &Load{}, Options{Affinity: tt.aff, Liveness: lv})
			for range 10 {
				d, err := s.Pick(context.Background(), &Request{Kind: KindChat, Model: "m", PreviousResponseID: tt.id,
					Messages: []Message{{Role: "user", Content: "x", Raw: []byte(`{"role":"user","content":"x"}`)}}})
				if tt.wantErr != "" {
					if !errors.Is(err, ErrResponseNotFound) || err.Error() != tt.wantErr {
						t.Fatalf("err = %v, want %q", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if tt.wantEP != "" && (d.Endpoint != tt.wantEP || len(d.Fallbacks) != 0) {
					t.Fatalf("endpoint %s fallbacks %v, want %s alone", d.Endpoint, d.Fallbacks, tt.wantEP)
				}
				if !strings.Contains(d.Reason, tt.wantNote) || len(d.keys) != 0 {
					t.Fatalf("reason %q with %d keys, want %q and no prefix keys", d.Reason, len(d.keys), tt.wantNote)
				}
			}
		})
	}
}

func TestResponseStored(t *testing.T) {
	aff := &mapAffinity{}
	s := New(NewPools(pipePools, ""), &Load{}, Options{Affinity: aff})
	d, err := s.Pick(context.Background(), &Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	d.ResponseStored("resp_1")
	d.ResponseStored("")
	if want := []string{"m/resp_1@" + d.Endpoint}; !slices.Equal(aff.stored, want) {
		t.Fatalf("stored %v, want %v", aff.stored, want)
	}
}

// TestPickByAffinityAllDown: with every endpoint of the pool down, a
// previous_response_id gets the pool's 503 (ErrNoEndpoint), not vLLM's 404,
// whether the id is known or not: no engine can serve anything, the storing
// one may come back with its responses (a failed readiness probe does not
// lose them), and a 404 would tell the client to drop a conversation that a
// retry could continue.
func TestPickByAffinityAllDown(t *testing.T) {
	for _, aff := range []*mapAffinity{
		{ids: map[string]string{"r1": "10.0.0.2:8000"}},
		{complete: true},
	} {
		lv := &downSet{down: map[string]string{}}
		for _, ep := range pipePools[0].Endpoints {
			lv.set(ep, "disconnected")
		}
		s := New(NewPools(pipePools, ""), &Load{}, Options{Affinity: aff, Liveness: lv})
		_, err := s.Pick(context.Background(), &Request{Kind: KindChat, Model: "m", PreviousResponseID: "r1",
			Messages: []Message{{Role: "user", Content: "x", Raw: []byte(`{"role":"user","content":"x"}`)}}})
		if !errors.Is(err, ErrNoEndpoint) || errors.Is(err, ErrResponseNotFound) {
			t.Fatalf("complete=%v: err = %v, want ErrNoEndpoint only", aff.complete, err)
		}
	}
}
