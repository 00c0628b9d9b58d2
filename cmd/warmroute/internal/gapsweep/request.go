package gapsweep

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/warmroute/warmroute/api"
)

// failPrefillHeader is the simulator's fault header that makes a request
// fail after admission, before any block is stored.
const failPrefillHeader = "x-sim-fail-prefill"

// Exchange is one request of a pair as the client saw it.
type Exchange struct {
	Status   int      `json:"status"`
	Decision Decision `json:"decision"`
	// ServedBy is the simulator's x-warmroute-served-by, when present.
	ServedBy string `json:"servedBy,omitempty"`
	// TTFT is the time from sending to the first content chunk; zero when
	// none arrived.
	TTFT      api.Duration `json:"ttft"`
	Usage     Usage        `json:"usage"`
	Cancelled bool         `json:"cancelled,omitempty"`
	Err       string       `json:"error,omitempty"`
	sent      time.Time
	firstAt   time.Time
}

// OK reports whether the request completed with a 2xx answer and no error.
func (e *Exchange) OK() bool { return e.Err == "" && e.Status/100 == 2 && !e.Cancelled }

// sender sends one streaming completion. It is safe for concurrent use.
type sender struct {
	client *http.Client
	url    string
	opts   *Options
	now    func() time.Time
}

func (s *sender) body(prompt string) []byte {
	req := map[string]any{"model": s.opts.RequestModel(), "prompt": prompt, "max_tokens": s.opts.MaxTokens,
		"stream": true, "stream_options": map[string]any{"include_usage": true}}
	if s.opts.CacheSalt != "" {
		req["cache_salt"] = s.opts.CacheSalt
	}
	b, _ := json.Marshal(req) // strings, ints and maps always encode
	return b
}

// send runs one request to its end; failures are recorded in the Exchange,
// not returned, since a failed request is a measurement too.
func (s *sender) send(ctx context.Context, prompt string, fault Fault) Exchange {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	ex := Exchange{sent: s.now()}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(s.body(prompt)))
	if err != nil {
		ex.Err = err.Error()
		return ex
	}
	req.Header.Set("Content-Type", "application/json")
	if fault == FaultFailPrefill {
		req.Header.Set(failPrefillHeader, "true")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		ex.Err = fmt.Sprintf("sending request: %v", err)
		return ex
	}
	defer resp.Body.Close()
	s.readHeaders(&ex, resp)
	if fault == FaultCancel {
		cancel() // right after the headers, before any token is read
		ex.Cancelled = true
		return ex
	}
	s.readBody(&ex, resp)
	return ex
}

func (s *sender) readHeaders(ex *Exchange, resp *http.Response) {
	ex.Status = resp.StatusCode
	ex.ServedBy = resp.Header.Get(api.ServedByHeader)
	d, err := ParseDecision(resp.Header.Get(api.DecisionHeader))
	if err != nil {
		ex.Err = err.Error()
	}
	ex.Decision = d
}

func (s *sender) readBody(ex *Exchange, resp *http.Response) {
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512)) // only for the message
		ex.Err = fmt.Sprintf("status %d: %s", resp.StatusCode, bytes.TrimSpace(b))
		return
	}
	r, err := readStream(resp.Body, s.now)
	ex.Usage = r.usage
	if !r.firstContent.IsZero() {
		ex.firstAt = r.firstContent
		ex.TTFT = api.Duration(r.firstContent.Sub(ex.sent))
	}
	if err != nil && ex.Err == "" {
		ex.Err = err.Error()
	}
}
