package gapsweep_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/warmroute/warmroute/cmd/warmroute/internal/gapsweep"
)

// A sweep against a server that answers every completion with a load-only
// decision: no second request can rest on the index.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("x-warmroute-decision", "basis=load; no tokenizer; endpoint=10.0.0.1:8000")
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"text\":\"hi\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	gaps, _ := gapsweep.ParseGaps("10ms,20ms")
	s, err := gapsweep.New(gapsweep.Options{Target: srv.URL, Model: "m", BlockSize: 16, Gaps: gaps, PairsPerGap: 1}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := s.Run(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range res.Pairs {
		fmt.Printf("%s: %s, uncached %v\n", p.GapD.D(), p.Verdict, p.Uncached)
	}
	fmt.Println("router decisions:", res.Decisions)
	// Output:
	// 10ms: prefix routing off, uncached <nil>
	// 20ms: prefix routing off, uncached <nil>
	// router decisions: map[none:4]
}
