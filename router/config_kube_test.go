package router

import (
	"strings"
	"testing"

	"github.com/warmroute/warmroute/events/subscriber"
	"github.com/warmroute/warmroute/scorer"
)

// TestValidateInferencePoolHeartbeats: heartbeat membership beside a pool
// following an InferencePool is refused (heartbeats would add members the
// pool's selector never picked); without events, or without such a pool,
// it stands.
func TestValidateInferencePoolHeartbeats(t *testing.T) {
	kube := []scorer.PoolConfig{{Name: "static", Endpoints: []string{"10.0.0.1:8000"}}, {Name: "m", InferencePool: "llm/vllm"}}
	static := []scorer.PoolConfig{{Name: "static", Endpoints: []string{"10.0.0.1:8000"}}}
	for _, tc := range []struct {
		name     string
		pools    []scorer.PoolConfig
		cidrs    []string
		disabled bool
		wantErr  string
	}{
		{name: "inferencePool without heartbeat membership", pools: kube},
		{name: "inferencePool with heartbeat membership", pools: kube, cidrs: []string{"10.0.0.0/8"},
			wantErr: `events.heartbeatMembership [10.0.0.0/8] with pools[1] "m" following inferencePool "llm/vllm"`},
		{name: "inferencePool with every endpoint", pools: kube, cidrs: subscriber.AnyEndpoint, wantErr: "heartbeats would add members"},
		{name: "events off", pools: kube, cidrs: []string{"10.0.0.0/8"}, disabled: true},
		{name: "static pools with heartbeat membership", pools: static, cidrs: []string{"10.0.0.0/8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Config
			c.Pools = tc.pools
			c.Events.HeartbeatMembership = tc.cidrs
			c.Events.Disabled = tc.disabled
			err := c.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Validate = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
