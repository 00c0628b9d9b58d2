package extproc_test

import (
	"slices"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/scorer"
)

// prefixHarness is a harness whose scorer routes on prefix: an index of
// block size 4 and byteTokens, with one fallback.
func prefixHarness(t *testing.T) (*harness, *index.Index) {
	t.Helper()
	ix, err := index.New(index.Options{BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	load := &scorer.Load{}
	sc := scorer.New(scorer.NewPools(testPools, ""), load, scorer.Options{
		Index: ix, Tokens: map[string]scorer.Tokens{"m": byteTokens{}}, Fallbacks: 1})
	h := newHarness(t, harnessConfig{picker: sc})
	h.load = load
	return h, ix
}

// A prefix decision's whole life over ext_proc, in every way it can end,
// ends with Done, and what the decision did in the index (its predictions,
// withdrawn on failure, moved to a fallback that served) holds after Done:
// no call reached the decision after it, or (decisions are quarantined,
// TestMain) it would have panicked or worked on poisoned keys.
func TestPrefixDecisionDone(t *testing.T) {
	prompt := strings.Repeat("warm prefix ", 8) // 96 bytes: 24 blocks
	const blocks = 24
	for _, tc := range []struct {
		name string
		// end plays the response; chosen and fallback are the decision's
		// targets. It returns the endpoint that should hold the
		// predictions afterwards ("" for none).
		end  func(s *session, chosen, fallback string) string
		want []string
	}{
		{"success", func(s *session, chosen, _ string) string {
			s.send(respHeadersWith("200", jsonType, false), respBody([]byte(jsonUsage), true))
			s.recv()
			s.recv()
			return chosen
		}, []string{"commit", "settle", "started", "usage(9,4,true)", "release", "done"}},
		{"error status", func(s *session, _, _ string) string {
			s.send(respHeadersWith("503", jsonType, true))
			s.recv()
			return ""
		}, []string{"commit", "settle", "started", "failed", "usage(0,0,false)", "release", "done"}},
		{"stream breaks before the response", func(s *session, _, _ string) string {
			s.fs.endErr = errBroken
			return ""
		}, []string{"commit", "settle", "failed", "usage(0,0,false)", "release", "done"}},
		{"fallback served", func(s *session, _, fallback string) string {
			r := respHeadersWith("200", jsonType, false)
			hs := r.GetResponseHeaders().GetHeaders()
			hs.Headers = append(hs.Headers, &corev3.HeaderValue{Key: api.ServedHeader, RawValue: []byte(fallback)})
			s.send(r, respBody([]byte("{}"), true))
			s.recv()
			s.recv()
			return fallback
		}, []string{"commit", "settle", "served(fallback)", "started", "usage(0,0,false)", "release", "done"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, ix := prefixHarness(t)
			calls := trackCalls(h)
			s := h.open()
			s.h = h
			s.send(first(reqHeaders("/v1/completions", false), buffered, buffered), reqBody(completion("m", prompt), true))
			s.recv()
			r := s.recv()
			dest := strings.Split(routing(t, r, r.GetRequestBody().GetResponse()), ",")
			if len(dest) != 2 {
				t.Fatalf("destination %v, want the choice and one fallback", dest)
			}
			if got := ix.EndpointEntries(dest[0]).Speculative; got != blocks {
				t.Fatalf("%d predictions on the chosen endpoint after routing, want %d", got, blocks)
			}
			holder := tc.end(s, dest[0], dest[1])
			close(s.fs.in)
			s.wait()
			s.check0()
			if got := calls(); !slices.Equal(got, tc.want) {
				t.Fatalf("calls %v, want %v", got, tc.want)
			}
			for _, ep := range dest {
				want := 0
				if ep == holder {
					want = blocks
				}
				if got := ix.EndpointEntries(ep).Speculative; got != want {
					t.Errorf("%s holds %d predictions after Done, want %d", ep, got, want)
				}
			}
		})
	}
}
