package extproc_test

import (
	"slices"
	"testing"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/scorer"
)

// TestPrefillerHeader: a disaggregated decision names its prefiller in
// x-prefiller-host-port and sends the request to the decoder; any other
// decision removes the header, so a client cannot pick the prefiller the
// decoder's sidecar sends its prompt to.
func TestPrefillerHeader(t *testing.T) {
	const pre, dec = "10.0.2.1:8000", "10.0.2.2:8000"
	pd := []scorer.PoolConfig{{Name: "m", Endpoints: []string{pre, dec},
		Roles: map[string]scorer.Role{pre: scorer.RolePrefill, dec: scorer.RoleDecode}}}
	tests := []struct {
		name  string
		pools []scorer.PoolConfig
		dest  string
		want  string // "" means removed
	}{
		{name: "P/D pool", pools: pd, dest: dec, want: pre},
		{name: "plain pool", pools: testPools},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, harnessConfig{picker: scorer.New(scorer.NewPools(tt.pools, ""), &scorer.Load{}, scorer.Options{})})
			s := h.open()
			hdrs := reqHeaders("/v1/completions", false)
			s.send(first(hdrs, buffered, buffered))
			s.recv()
			s.send(reqBody(completion("m", "hello"), true))
			br := s.recv()
			c := br.GetRequestBody().GetResponse()
			dest := routing(t, br, c)
			if tt.dest != "" && dest != tt.dest {
				t.Fatalf("destination %q, want the decoder %q", dest, tt.dest)
			}
			got, set := headerIn(c.GetHeaderMutation(), api.PrefillerHeader)
			removed := slices.Contains(c.GetHeaderMutation().GetRemoveHeaders(), api.PrefillerHeader)
			switch {
			case tt.want != "" && (got != tt.want || removed):
				t.Fatalf("%s = %q (removed %v), want %q", api.PrefillerHeader, got, removed, tt.want)
			case tt.want == "" && (set || !removed):
				t.Fatalf("%s set %v to %q, removed %v; want it removed", api.PrefillerHeader, set, got, removed)
			}
			s.send(respHeaders(false))
			s.recv()
			s.send(respBody([]byte(`{"choices":[]}`), true))
			s.recv()
			if err := s.finish(); err != nil {
				t.Errorf("Process = %v", err)
			}
		})
	}
}
