package gapsweep

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/index/ttl"
)

// maxDebugBody bounds what is read from the debug endpoint; a TTL report
// with thousands of rows is still far below it.
const maxDebugBody = 16 << 20

// DebugClient reads the router's debug endpoint. It is safe for concurrent use
// when Client is; the zero Client means http.DefaultClient.
type DebugClient struct {
	Base   string
	Client *http.Client
}

// Report fetches the TTL report (/debug/ttl?format=json).
func (a DebugClient) Report(ctx context.Context) (ttl.Report, error) {
	var rep ttl.Report
	err := a.getJSON(ctx, "/debug/ttl?format=json", &rep)
	return rep, err
}

// Index fetches the router's index identity (block size, grace).
func (a DebugClient) Index(ctx context.Context) (api.IndexInfo, error) {
	var info api.IndexInfo
	if err := a.getJSON(ctx, api.IndexInfoPath, &info); err != nil {
		return info, err
	}
	if info.BlockSize <= 0 {
		return info, fmt.Errorf("reading %s: block size %d: %w", api.IndexInfoPath, info.BlockSize, ErrDebug)
	}
	return info, nil
}

func (a DebugClient) getJSON(ctx context.Context, path string, v any) error {
	body, err := a.get(ctx, path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("decoding %s: %w: %w", path, ErrDebug, err)
	}
	return nil
}

// get returns the body of a 200 answer for path.
func (a DebugClient) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, trimBase(a.Base)+path, nil)
	if err != nil {
		return nil, fmt.Errorf("requesting %s: %w: %w", path, ErrDebug, err)
	}
	c := a.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("requesting %s: %w: %w", path, ErrDebug, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDebugBody))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w: %w", path, ErrDebug, err)
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("requesting %s: %s: %w: %w", path, resp.Status, ErrDebug, errNotServed)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("requesting %s: %s: %w", path, resp.Status, ErrDebug)
	}
	return body, nil
}

// Text fetches the TTL report as the router's own text table.
func (a DebugClient) Text(ctx context.Context) ([]byte, error) {
	return a.get(ctx, "/debug/ttl?format=text")
}

// TimingFor picks model's timing from rep: over the model's rows, the
// largest p50, p95 and TTL (the slowest endpoint decides whether a gap is
// covered) and the total sample count. Without rows for the model it falls
// back to the overall row.
func TimingFor(rep ttl.Report, model string) Timing {
	var t Timing
	found := false
	for _, r := range rep.Rows {
		if r.Model != model {
			continue
		}
		found = true
		t.P50 = max(t.P50, r.Advice.P50.D())
		t.P95 = max(t.P95, r.Advice.P95.D())
		t.TTL = max(t.TTL, r.Current.D())
		t.Samples += r.Advice.Samples
	}
	if !found {
		o := rep.Overall
		t = Timing{P50: o.Advice.P50.D(), P95: o.Advice.P95.D(), TTL: o.Current.D(), Samples: o.Advice.Samples}
	}
	if t.TTL == 0 {
		t.TTL = rep.Static.D()
	}
	return t
}
