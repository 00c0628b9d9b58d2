package router

import (
	"maps"
	"slices"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/index"
	"github.com/warmroute/warmroute/scorer"
)

// TestPoolSinkRoles: members' llm-d.ai/role labels become the pool's roles;
// a member with an unknown role is kept out of the pool (and its entries
// forgotten) until its label names a role again.
func TestPoolSinkRoles(t *testing.T) {
	ix, err := index.New(index.Options{BlockSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	const p, d, e = "192.0.2.1:8000", "192.0.2.2:8000", "192.0.2.3:8000"
	pools := scorer.NewPools([]scorer.PoolConfig{{Name: "m"}}, "")
	s := &poolSink{pools: pools, ix: ix, name: "m"}
	if _, err := ix.Store(index.Stored{Endpoint: e, Hashes: []uint64{1}, Tokens: []uint32{1, 2, 3, 4}, BlockSize: 4, Identity: index.Identity{Model: "m"}}); err != nil {
		t.Fatal(err)
	}
	s.SetRoleLabels(map[string]string{p: "prefill", d: "decode", e: "encode"})
	s.SetMembers([]string{p, d, e})
	want := map[string]scorer.Role{p: scorer.RolePrefill, d: scorer.RoleDecode}
	if got := pools.Roles("m"); !maps.Equal(got, want) {
		t.Fatalf("roles %v, want %v", got, want)
	}
	if _, eps, _ := pools.Lookup("m"); !slices.Equal(eps, []string{p, d}) {
		t.Fatalf("members %v, want the encode-only pod left out", eps)
	}
	if n := ix.EndpointEntries(e).Confirmed; n != 0 {
		t.Fatalf("the refused endpoint keeps %d entries", n)
	}
	s.SetRoleLabels(map[string]string{p: "prefill", e: "prefill-decode"})
	s.SetMembers([]string{p, d, e})
	if _, eps, _ := pools.Lookup("m"); !slices.Equal(eps, []string{p, d, e}) {
		t.Fatalf("members %v after relabelling, want all three", eps)
	}
	if got := pools.Roles("m"); !maps.Equal(got, map[string]scorer.Role{p: scorer.RolePrefill}) {
		t.Fatalf("roles %v after relabelling, want only the prefiller", got)
	}
}

// TestRouterPDFromPodLabels: an InferencePool whose pods carry llm-d.ai/role
// labels is a P/D pool: requests go to the decode pod, never to the
// prefill-only one.
func TestRouterPDFromPodLabels(t *testing.T) {
	pre, dec := readyPod("p", "192.0.2.1", true), readyPod("d", "192.0.2.2", true)
	pre.Labels[api.RoleLabel], dec.Labels[api.RoleLabel] = "prefill", "decode"
	fakeInferencePool(t, pre, dec)

	var cfg Config
	cfg.Events.Disabled = true
	cfg.Pools = []scorer.PoolConfig{{Name: "m", InferencePool: "llm/vllm"}}
	a := startRouterAt(t, cfg)
	conn, err := grpc.NewClient(a.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for range 20 {
		if got := routeHeaderOnly(t, conn); got != "192.0.2.2:8000" {
			t.Fatalf("routed to %s, want the decode pod 192.0.2.2:8000", got)
		}
	}
}
