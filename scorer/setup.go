package scorer

import (
	"fmt"
	"net/http"

	"github.com/warmroute/warmroute/tokenizer"
)

// LoadTokens builds each configured pool's Tokens, keyed by pool name, loading
// tokenizer files from disk. Pools without a tokenizer are absent from the
// result and route on load alone. m, from tokenizer.NewMetrics, counts the
// drift checks of pools in drift mode; nil counts them nowhere.
func LoadTokens(pools []PoolConfig, m *tokenizer.Metrics) (map[string]Tokens, error) {
	if m == nil {
		m, _ = tokenizer.NewMetrics(nil) // registers nothing, so cannot fail
	}
	out := map[string]Tokens{}
	for _, pc := range pools {
		tc := pc.Tokenizer.WithDefaults()
		if !pc.Tokenizer.Enabled() {
			continue
		}
		engine, err := tokenizer.ParseEngine(pc.Engine)
		if err != nil {
			return nil, fmt.Errorf("pool %q: %w: %w", pc.Name, ErrTokenizerConfig, err)
		}
		t, err := poolTokens(tc, engine, m)
		if err != nil {
			return nil, fmt.Errorf("pool %q: %w: %w", pc.Name, ErrTokenizerConfig, err)
		}
		out[pc.Name] = t
	}
	return out, nil
}

func poolTokens(tc TokenizerConfig, engine tokenizer.Engine, m *tokenizer.Metrics) (Tokens, error) {
	client := &http.Client{}
	if tc.Mode == TokenizerRemote {
		return NewRemoteTokens(client, remoteTimeout), nil
	}
	tk, err := tokenizer.LoadDir(tc.Dir)
	if err != nil {
		return nil, err
	}
	local := NewLocalTokens(tk, WithEngine(engine))
	if tc.Mode == TokenizerDrift {
		return NewDriftTokens(local, driftSampleRate, m, client, remoteTimeout), nil
	}
	return local, nil
}
