package e2e

import (
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/index/ttl"
	"github.com/warmroute/warmroute/internal/testwait"
)

// pdRoles: two prefill and two decode simulators.
var pdRoles = []string{"prefill", "prefill", "decode", "decode"}

// pdRouted is one request through Envoy to a P/D pool.
type pdRouted struct {
	routed
	prefilledBy string // the simulator the decoder had prefill the prompt
	prefiller   string // the prefill endpoint the router chose (decision header)
}

// prefillEndpointRE reads the prefiller from a disaggregated decision:
// its prefill part's endpoint.
var prefillEndpointRE = regexp.MustCompile(`^pd=disaggregated; basis=[^;]*; matched=[^;]*; endpoint=([^;]+);`)

func pdComplete(t *testing.T, ps *harness.PrefixStack, prompt string, header map[string]string) pdRouted {
	t.Helper()
	r, h := completeHeader(t, ps, prompt, header)
	out := pdRouted{routed: r, prefilledBy: h.Get(api.PrefilledByHeader)}
	if m := prefillEndpointRE.FindStringSubmatch(out.decision.raw); m != nil {
		out.prefiller = m[1]
	}
	return out
}

// TestPDDisaggregation runs a P/D pool of two prefill and two decode
// simulators (each with its relay, over NATS) behind the real Envoy. The
// router names the prefiller in x-prefiller-host-port and routes to a
// decoder, whose sidecar role prefills there first; events arrive 300ms
// late, so a follow-up request sent at once can only find the prefiller
// through the router's prediction.
func TestPDDisaggregation(t *testing.T) {
	ps := newPrefixStack(t, harness.PrefixOptions{Sims: 4, Roles: pdRoles, SimArgs: []string{"--event-delay", "300ms"}})
	prefillers, decoders := ps.EventSims[:2], ps.EventSims[2:]
	prefix := words("pd", 120)
	first := pdComplete(t, ps, prefix+" first question?", nil)
	checkPDRoute(t, ps, first, decoders)
	if first.cached != 0 || first.decision.confirmed+first.decision.spec != 0 {
		t.Fatalf("first request: cached %d, decision %q; want a cold prefill", first.cached, first.decision.raw)
	}
	second := pdComplete(t, ps, prefix+" second question?", nil)
	checkPDRoute(t, ps, second, decoders)
	predicted := (second.decision.confirmed + second.decision.spec) * harness.DefaultBlockSize
	t.Logf("second request: prefilled by %s (first: %s), decision %q, cached_tokens %d, predicted %d blocks (%d tokens)",
		second.prefilledBy, first.prefilledBy, second.decision.raw, second.cached, second.decision.spec, predicted)
	if second.prefilledBy != first.prefilledBy || second.decision.basis != "speculative" || second.decision.spec == 0 {
		t.Fatalf("second request prefilled by %s on %q, want %s on its prediction", second.prefilledBy, second.decision.raw, first.prefilledBy)
	}
	if second.cached == 0 || second.cached != predicted {
		t.Fatalf("second request cached_tokens = %d, want the predicted %d", second.cached, predicted)
	}
	warm := simByID(t, ps, first.prefilledBy)
	toks := tokenize(t, warm, prefix+" first question?")
	testwait.Until(t, 10*time.Second, func() string {
		if got := lookupOn(t, ps, toks, warm.Addr); got.Confirmed != len(toks)/warm.BlockSize {
			return fmt.Sprintf("router holds %+v of the prompt's %d blocks on the prefiller %s, want all confirmed", got, len(toks)/warm.BlockSize, warm.Addr)
		}
		return ""
	})
	for _, d := range decoders {
		if got := lookupOn(t, ps, toks, d.Addr); got.Confirmed+got.Speculative != 0 {
			t.Fatalf("router holds %+v of the prompt on the decoder %s, want nothing", got, d.Addr)
		}
	}
	checkPDTTL(t, ps, warm, decoders)
	testPDDecodeSpread(t, ps, prefix, decoders)
	testPDPrefillerDown(t, ps, prefix, warm, prefillers, decoders)
}

// checkPDRoute: the request was served by a decoder that had the prompt
// prefilled by the prefiller the router chose.
func checkPDRoute(t *testing.T, ps *harness.PrefixStack, r pdRouted, decoders []*harness.EventSim) {
	t.Helper()
	if !isOneOf(r.simID, decoders) {
		t.Fatalf("served by %s, want a decoder (decision %q)", r.simID, r.decision.raw)
	}
	if r.prefilledBy == "" || r.prefiller == "" || simByID(t, ps, r.prefilledBy).Addr != r.prefiller {
		t.Fatalf("prefilled by %q, router chose prefiller %q (decision %q): x-prefiller-host-port did not reach the decoder",
			r.prefilledBy, r.prefiller, r.decision.raw)
	}
}

func isOneOf(id string, sims []*harness.EventSim) bool {
	for _, s := range sims {
		if s.ID == id {
			return true
		}
	}
	return false
}

// testPDDecodeSpread: concurrent requests held in flight on their decoders
// spread over both, while their prefill stays on the warm prefiller.
func testPDDecodeSpread(t *testing.T, ps *harness.PrefixStack, prefix string, decoders []*harness.EventSim) {
	const n = 8
	var mu sync.Mutex
	served, prefilled := map[string]int{}, map[string]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := pdComplete(t, ps, fmt.Sprintf("%s spread %d", prefix, i), map[string]string{"x-sim-delay": "1s"})
			mu.Lock()
			defer mu.Unlock()
			served[r.simID]++
			prefilled[r.prefilledBy]++
		})
	}
	wg.Wait()
	t.Logf("%d concurrent requests: decoded by %v, prefilled by %v", n, served, prefilled)
	for _, d := range decoders {
		if served[d.ID] < 2 {
			t.Fatalf("decoders served %v: want the load spread over both", served)
		}
	}
}

// testPDPrefillerDown: once the warm prefiller's engine dies, it leaves the
// prefill candidates: the prompt prefills cold on the other prefiller.
func testPDPrefillerDown(t *testing.T, ps *harness.PrefixStack, prefix string, warm *harness.EventSim, prefillers, decoders []*harness.EventSim) {
	other := prefillers[0]
	if other == warm {
		other = prefillers[1]
	}
	warm.Kill()
	testwait.Until(t, 20*time.Second, func() string {
		if v := scrapeValue(t, ps, "warmroute_scorer_endpoints", map[string]string{"pool": ps.Model, "state": "down"}); v != 1 {
			return fmt.Sprintf("down endpoints %v, want 1", v)
		}
		return ""
	})
	for i := range 3 {
		r := pdComplete(t, ps, fmt.Sprintf("%s after the prefiller died %d", prefix, i), nil)
		checkPDRoute(t, ps, r, decoders)
		if r.prefilledBy != other.ID {
			t.Fatalf("request %d prefilled by %s, want %s: the dead prefiller %s is still a candidate (%q)", i, r.prefilledBy, other.ID, warm.ID, r.decision.raw)
		}
	}
	if v := scrapeValue(t, ps, "warmroute_scorer_pd_role_picks_total", map[string]string{"role": "prefill", "endpoint": other.Addr}); v < 3 {
		t.Fatalf("prefill picks of %s = %v, want at least 3", other.Addr, v)
	}
	if v := scrapeValue(t, ps, "warmroute_scorer_pd_decisions_total", map[string]string{"placement": "disaggregated"}); v < 13 {
		t.Fatalf("disaggregated decisions = %v, want every request's (13)", v)
	}
}

// checkPDTTL: the route-to-confirmation clock ran for the prefiller's
// placement, stopped by its events; no decoder has a measurement.
func checkPDTTL(t *testing.T, ps *harness.PrefixStack, warm *harness.EventSim, decoders []*harness.EventSim) {
	t.Helper()
	testwait.Until(t, 10*time.Second, func() string {
		if row, ok := rowFor(ttlReport(t, ps.Router), warm.Addr); !ok || row.Endings.Confirmed == 0 {
			return fmt.Sprintf("TTL report for the prefiller %s: %+v, want confirmed endings", warm.Addr, row.Endings)
		}
		return ""
	})
	rep := ttlReport(t, ps.Router)
	for _, d := range decoders {
		if row, ok := rowFor(rep, d.Addr); ok && row.Endings != (ttl.Endings{}) {
			t.Fatalf("TTL report has endings %+v for the decoder %s, want none", row.Endings, d.Addr)
		}
	}
	n, sum := histogram(routerMetrics(t, ps.Router), latencyMetric, map[string]string{"endpoint": warm.Addr, "ending": "confirmed", "block": "last"})
	row, _ := rowFor(rep, warm.Addr)
	t.Logf("prefiller %s: %d confirmed endings, %d route-to-confirmation samples, mean %.0f ms (events delayed 300ms)",
		warm.Addr, row.Endings.Confirmed, n, 1000*sum/float64(max(n, 1)))
}
