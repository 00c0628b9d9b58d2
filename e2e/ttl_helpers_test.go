package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/index/ttl"
)

const (
	endingsMetric  = "warmroute_ttl_endings_total"
	latencyMetric  = "warmroute_ttl_confirmation_latency_seconds"
	specRoutes     = "warmroute_ttl_speculative_routes_total"
	decisionHeader = "x-warmroute-decision"
)

// send posts a non-streaming completion to url (an Envoy listener's
// /v1/completions) and returns what became of it; a non-200 answer is
// returned, not fatal, since some tests provoke failures.
func send(t *testing.T, url, prompt string, header map[string]string) (routed, int) {
	t.Helper()
	r, err := do(context.Background(), http.MethodPost, url, mustJSON(t, completionRequest(prompt, false)), header)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	out := routed{simID: r.header.Get("x-warmroute-served-by"), decision: parseDecision(r.header.Get(decisionHeader))}
	if r.status == http.StatusOK {
		out.prompt, out.cached = clientUsage(t, r.body, false)
	}
	return out, r.status
}

// ttlReport fetches a router's /debug/ttl as JSON.
func ttlReport(t *testing.T, r *harness.Router) ttl.Report {
	t.Helper()
	res := mustDo(t, http.MethodGet, "http://"+r.DebugAddr+"/debug/ttl?format=json", nil, nil)
	var rep ttl.Report
	if res.status != http.StatusOK {
		t.Fatalf("GET /debug/ttl: %v", res)
	}
	if err := json.Unmarshal(res.body, &rep); err != nil {
		t.Fatalf("decoding /debug/ttl: %v: %v", err, res)
	}
	return rep
}

// rowFor returns the report's row for endpoint (any model but _unknown).
func rowFor(rep ttl.Report, endpoint string) (ttl.Row, bool) {
	for _, r := range rep.Rows {
		if r.Endpoint == endpoint && r.Model != "_unknown" {
			return r, true
		}
	}
	return ttl.Row{}, false
}

// routerMetrics scrapes one router.
func routerMetrics(t *testing.T, r *harness.Router) harness.Metrics {
	t.Helper()
	m, err := harness.Scrape(context.Background(), r.MetricsURL())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// endings returns a router's warmroute_ttl_endings_total for ending over
// every real endpoint and model; the overall "_all" series repeats them and
// is left out.
func endings(t *testing.T, r *harness.Router, ending string) float64 {
	t.Helper()
	var sum float64
	for _, s := range routerMetrics(t, r)[endingsMetric].GetMetric() {
		if labelsInclude(s.GetLabel(), map[string]string{"ending": ending}) &&
			!labelsInclude(s.GetLabel(), map[string]string{"endpoint": "_all"}) {
			sum += s.GetCounter().GetValue()
		}
	}
	return sum
}

// lookupAt returns r's view of tokens on endpoint.
func lookupAt(t *testing.T, r *harness.Router, model string, tokens []uint32, endpoint string) api.EndpointIndexLookup {
	t.Helper()
	res, err := r.IndexLookup(context.Background(), api.IndexLookupRequest{Model: model, Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Endpoints {
		if e.Endpoint == endpoint {
			return e
		}
	}
	return api.EndpointIndexLookup{Endpoint: endpoint}
}

// histogram returns the sample count and sum of family name's histogram
// series whose labels include match, leaving out any overall "_all" series.
func histogram(m harness.Metrics, name string, match map[string]string) (count uint64, sum float64) {
	for _, s := range m[name].GetMetric() {
		if !labelsInclude(s.GetLabel(), match) || labelsInclude(s.GetLabel(), map[string]string{"endpoint": "_all"}) {
			continue
		}
		count += s.GetHistogram().GetSampleCount()
		sum += s.GetHistogram().GetSampleSum()
	}
	return count, sum
}

func labelsInclude[L interface {
	GetName() string
	GetValue() string
}](labels []L, match map[string]string) bool {
	found := 0
	for _, l := range labels {
		if v, ok := match[l.GetName()]; ok && v == l.GetValue() {
			found++
		}
	}
	return found == len(match)
}

// atLeast is a condition for eventually: metric name's sum on r, among
// series matching match, has reached want.
func atLeast(t *testing.T, r *harness.Router, name string, match map[string]string, want float64) func() string {
	return func() string {
		if v := routerMetrics(t, r).Sum(name, match); v < want {
			return fmt.Sprintf("%s%v = %v, want >= %v", name, match, v, want)
		}
		return ""
	}
}
