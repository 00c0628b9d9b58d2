package scorer

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warmroute/warmroute/tokenizer"
)

// LoadTokens builds each configured pool's Tokens, keyed by pool name, loading
// tokenizer files from disk. Pools without a tokenizer are absent from the
// result and route on load alone. reg receives the tokenizer drift metrics
// when a pool uses drift mode.
func LoadTokens(pools []PoolConfig, reg prometheus.Registerer) (map[string]Tokens, error) {
	out := map[string]Tokens{}
	var metrics *tokenizer.Metrics
	for _, pc := range pools {
		tc := pc.Tokenizer.WithDefaults()
		if !pc.Tokenizer.Enabled() {
			continue
		}
		if tc.Mode == TokenizerDrift && metrics == nil {
			var err error
			if metrics, err = tokenizer.NewMetrics(reg); err != nil {
				return nil, fmt.Errorf("registering tokenizer metrics: %w", err)
			}
		}
		t, err := poolTokens(tc, metrics)
		if err != nil {
			return nil, fmt.Errorf("pool %q: %w: %w", pc.Name, ErrTokenizerConfig, err)
		}
		out[pc.Name] = t
	}
	return out, nil
}

func poolTokens(tc TokenizerConfig, m *tokenizer.Metrics) (Tokens, error) {
	client := &http.Client{}
	if tc.Mode == TokenizerRemote {
		return NewRemoteTokens(client, remoteTimeout), nil
	}
	tk, err := tokenizer.LoadDir(tc.Dir)
	if err != nil {
		return nil, err
	}
	local := NewLocalTokens(tk)
	if tc.Mode == TokenizerDrift {
		return NewDriftTokens(local, driftSampleRate, m, client, remoteTimeout), nil
	}
	return local, nil
}
