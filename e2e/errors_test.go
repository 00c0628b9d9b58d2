package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/e2e/harness"
	"github.com/warmroute/warmroute/scorer"
)

// maxBody is the router's --max-body-bytes in these tests: above the 2 MB
// prompts that must pass, below the oversize one. The oversize body stays
// under gRPC's limit (maxBody + 1 MiB) so BUFFERED mode reaches the router's
// own size check rather than a transport error.
const maxBody = 3 << 20

func TestBadInput(t *testing.T) {
	oversize := strings.Repeat("x", maxBody+maxBody/6)
	tests := []struct {
		name    string
		path    string
		body    string
		header  map[string]string
		status  int
		errType string
		outcome string // warmroute_extproc_requests_total label
	}{
		{name: "malformed json", path: "/v1/completions", body: `{"model": "e2e-model", "prompt": `,
			status: 400, errType: api.ErrTypeInvalidRequest, outcome: "bad_request"},
		{name: "missing model", path: "/v1/completions", body: `{"prompt": "hi"}`,
			status: 400, errType: api.ErrTypeInvalidRequest, outcome: "bad_request"},
		{name: "empty prompt", path: "/v1/completions", body: `{"model": "e2e-model", "prompt": ""}`,
			status: 400, errType: api.ErrTypeInvalidRequest, outcome: "bad_request"},
		{name: "empty messages", path: "/v1/chat/completions", body: `{"model": "e2e-model", "messages": []}`,
			status: 400, errType: api.ErrTypeInvalidRequest, outcome: "bad_request"},
		{name: "unknown model", path: "/v1/completions", body: `{"model": "no-such-model", "prompt": "hi"}`,
			status: 404, errType: api.ErrTypeNotFound, outcome: "unknown_model"},
		{name: "body over max-body-bytes", path: "/v1/completions",
			body:   `{"model": "e2e-model", "prompt": "` + oversize + `"}`,
			status: 413, errType: api.ErrTypeTooLarge, outcome: "too_large"},
		{name: "pool without endpoints", path: "/v1/completions", body: `{"model": "ghost-model", "prompt": "hi"}`,
			status: 503, errType: api.ErrTypeUnavailable, outcome: "no_endpoint"},
		{name: "empty subset hint", path: "/v1/completions", body: `{"model": "e2e-model", "prompt": "hi"}`,
			header: map[string]string{"x-e2e-subset-hint": "127.0.0.1:9"},
			status: 503, errType: api.ErrTypeUnavailable, outcome: "no_endpoint"},
	}
	for _, mode := range modes {
		t.Run(modeName(mode), func(t *testing.T) {
			st := newStack(t, harness.Options{Template: mode, MaxBodyBytes: maxBody,
				ExtraPools: []scorer.PoolConfig{{Name: "ghost", Models: []string{"ghost-model"}}}})
			want := map[string]float64{}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					r := mustDo(t, http.MethodPost, st.URL(tt.path), []byte(tt.body), tt.header)
					checkOpenAIError(t, r, tt.status, tt.errType)
					if id := r.header.Get("x-warmroute-served-by"); id != "" {
						t.Fatalf("rejected request reached simulator %s", id)
					}
				})
				want[tt.outcome]++
			}
			m := scrape(t, st)
			for outcome, n := range want {
				got := m.Sum("warmroute_extproc_requests_total", map[string]string{"outcome": outcome})
				if got != n {
					t.Errorf("warmroute_extproc_requests_total{outcome=%q} = %v, want %v", outcome, got, n)
				}
			}
		})
	}
}

// checkOpenAIError checks that r is the router's OpenAI-style error.
func checkOpenAIError(t *testing.T, r result, status int, errType string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %v, want %d", r, status)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var e api.ErrorResponse
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("decoding error body %v: %v", r, err)
	}
	if e.Error.Code != status || e.Error.Type != errType || e.Error.Message == "" {
		t.Fatalf("error body = %+v, want code %d, type %q and a message", e.Error, status, errType)
	}
}
