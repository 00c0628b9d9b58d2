package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/warmroute/warmroute/api"
)

// IndexEntries asks the router how many confirmed and speculative entries
// its index holds for endpoint.
func (r *Router) IndexEntries(ctx context.Context, endpoint string) (api.EndpointIndexEntries, error) {
	var out api.EndpointIndexEntries
	u := "http://" + r.DebugAddr + api.IndexEntriesPath + "?endpoint=" + url.QueryEscape(endpoint)
	err := debugJSON(ctx, http.MethodGet, u, nil, &out)
	return out, err
}

// IndexLookup asks the router which leading blocks of tokens each endpoint
// of model's pool holds.
func (r *Router) IndexLookup(ctx context.Context, in api.IndexLookupRequest) (api.IndexLookupResponse, error) {
	var out api.IndexLookupResponse
	body, err := json.Marshal(in)
	if err != nil {
		return out, err
	}
	err = debugJSON(ctx, http.MethodPost, "http://"+r.DebugAddr+api.IndexLookupPath, body, &out)
	return out, err
}

func debugJSON(ctx context.Context, method, u string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s %q", method, u, resp.Status, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decoding %s: %w", u, err)
	}
	return nil
}
