package scorer_test

import (
	"context"
	"fmt"

	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/scorer"
)

func ExampleScorer_Pick() {
	pools := scorer.NewPools([]scorer.PoolConfig{{Name: "m", Endpoints: []string{"10.0.0.1:8000"}}}, "")
	s := scorer.New(pools, &scorer.Load{}, scorer.Options{})
	d, err := s.Pick(context.Background(), &scorer.Request{Model: "m"})
	if err != nil {
		panic(err)
	}
	d.Commit()        // Envoy has been told
	defer d.Release() // the response ended
	fmt.Println(d.Endpoint)
	// Output: 10.0.0.1:8000
}

// givenIDs is a Tokens for requests that carry token ids.
type givenIDs struct{}

func (givenIDs) Tokens(_ context.Context, req *scorer.Request, _ []string) ([]uint32, error) {
	out := make([]uint32, len(req.PromptTokenIDs[0]))
	for i, id := range req.PromptTokenIDs[0] {
		out[i] = uint32(id)
	}
	return out, nil
}

// Example_prefix shows prefix-aware routing: the first request's commit
// predicts its blocks on the chosen endpoint, so the follow-up sharing the
// prefix goes there on a speculative basis before any engine event arrives.
func Example_prefix() {
	ix, _ := index.New(index.Options{BlockSize: 4})
	pools := scorer.NewPools([]scorer.PoolConfig{{Name: "m", Endpoints: []string{"10.0.0.1:8000", "10.0.0.2:8000"}}}, "")
	s := scorer.New(pools, &scorer.Load{}, scorer.Options{
		Index: ix, Tokens: map[string]scorer.Tokens{"m": givenIDs{}},
	})
	first := &scorer.Request{Kind: scorer.KindCompletion, Model: "m", PromptTokenIDs: [][]int{{1, 2, 3, 4, 5, 6, 7, 8}}}
	d, _ := s.Pick(context.Background(), first)
	d.Commit()
	d.Release()

	next := &scorer.Request{Kind: scorer.KindCompletion, Model: "m", PromptTokenIDs: [][]int{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}}
	d2, _ := s.Pick(context.Background(), next)
	fmt.Println(d2.Endpoint == d.Endpoint, d2.Basis, d2.Match.Speculative)
	// Output: true speculative 2
}
