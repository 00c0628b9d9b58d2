package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/warmroute/warmroute/api"
)

// Prefill/decode disaggregation. A simulator with Role RoleDecode acts as a
// decode engine together with llm-d's routing sidecar in front of it: a
// request carrying x-prefiller-host-port is first sent, as a prefill
// request, to that prefiller (the same body with kv_transfer_params asking
// for a remote decode, stream off, one output token), then decoded here on
// the KV state the prefiller computed. The decoder's own prefix cache is
// neither consulted nor filled (the prompt's blocks are the prefiller's; it
// publishes them), and it reports the prefiller's cached_tokens, since that
// cache is what the prompt reused. Any simulator answers a prefill request
// (kv_transfer_params.do_remote_decode) with kv_transfer_params for the
// decoder, as vLLM's NIXL connector does.

// Roles of Options.Role.
const (
	RoleBoth    = ""
	RolePrefill = "prefill"
	RoleDecode  = "decode"
)

// ErrRemotePrefill means a decode simulator could not get the prompt
// prefilled by the prefiller a request named.
var ErrRemotePrefill = errors.New("remote prefill failed")

// remotePrefillError carries the prefiller's status, which the decoder
// answers with, as llm-d's sidecar does (502 when there was none).
type remotePrefillError struct {
	status int
	err    error
}

func (e *remotePrefillError) Error() string { return "remote prefill: " + e.err.Error() }
func (e *remotePrefillError) Unwrap() error { return e.err }
func (e *remotePrefillError) Is(target error) bool {
	return target == ErrRemotePrefill
}

// kvTransferRequest is the part of a request's kv_transfer_params the
// simulator reads.
type kvTransferRequest struct {
	DoRemoteDecode  bool `json:"do_remote_decode"`
	DoRemotePrefill bool `json:"do_remote_prefill"`
}

// kvTransferParams is what a prefill answers with, in the fields vLLM's
// NIXL connector uses, for the decoder to pull the blocks.
type kvTransferParams struct {
	DoRemotePrefill bool   `json:"do_remote_prefill"`
	DoRemoteDecode  bool   `json:"do_remote_decode"`
	RemoteBlockIDs  []int  `json:"remote_block_ids"`
	RemoteEngineID  string `json:"remote_engine_id"`
	RemoteHost      string `json:"remote_host"`
	RemotePort      int    `json:"remote_port"`
	TPSize          int    `json:"tp_size"`
}

// transferParams describes seq's blocks to the decoder.
func (s *Server) transferParams(seq *Sequence) *kvTransferParams {
	host, port, _ := net.SplitHostPort(s.opts.Addr)
	p := &kvTransferParams{DoRemotePrefill: true, RemoteEngineID: s.opts.ID, RemoteHost: host, TPSize: 1,
		RemoteBlockIDs: []int{}}
	p.RemotePort, _ = strconv.Atoi(port)
	if seq.blocks != nil {
		for _, id := range seq.blocks.ids {
			p.RemoteBlockIDs = append(p.RemoteBlockIDs, int(id))
		}
	}
	return p
}

// prefillClient sends prefill requests; the prefiller's own costs bound
// how long one takes, the timeout only a prefiller that hangs.
var prefillClient = &http.Client{Timeout: 2 * time.Minute}

// remotePrefill sends body's prompt to the prefiller at hostPort as a
// prefill request and returns the cached tokens the prefiller reported and
// whether it answered with kv_transfer_params (a prefiller that did not
// cannot hand its KV state over, so the decoder computes the prompt itself,
// as the sidecar then lets it).
func (s *Server) remotePrefill(ctx context.Context, r *http.Request, body []byte, hostPort string, d dialect) (prefillResult, error) {
	if _, _, err := net.SplitHostPort(hostPort); err != nil {
		return prefillResult{}, &remotePrefillError{status: http.StatusBadRequest, err: fmt.Errorf("%s %q: %w", api.PrefillerHeader, hostPort, err)}
	}
	pbody, err := prefillBody(body, d)
	if err != nil {
		return prefillResult{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+hostPort+r.URL.Path, bytes.NewReader(pbody))
	if err != nil {
		return prefillResult{}, &remotePrefillError{status: http.StatusBadGateway, err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	if id := r.Header.Get("x-request-id"); id != "" {
		req.Header.Set("x-request-id", id)
	}
	resp, err := prefillClient.Do(req)
	if err != nil {
		return prefillResult{}, &remotePrefillError{status: http.StatusBadGateway, err: err}
	}
	defer resp.Body.Close()
	return readPrefill(resp)
}

// prefillResult is what a decoder learned from its prefiller.
type prefillResult struct {
	cached      int    // the prefiller's usage cached_tokens
	transferred bool   // it answered with kv_transfer_params
	by          string // its x-warmroute-served-by
}

// prefillBody is body as a prefill request: kv_transfer_params asking for
// a remote decode, no streaming, one output token.
func prefillBody(body []byte, d dialect) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("decoding request for the prefiller: %w: %w", ErrMalformedJSON, err)
	}
	m["kv_transfer_params"] = json.RawMessage(`{"do_remote_decode":true,"do_remote_prefill":false,` +
		`"remote_engine_id":null,"remote_block_ids":null,"remote_host":null,"remote_port":null}`)
	m["stream"] = json.RawMessage("false")
	delete(m, "stream_options")
	m["max_tokens"] = json.RawMessage("1")
	if d.name() == (chatAPI{}).name() {
		m["max_completion_tokens"] = json.RawMessage("1")
	}
	return json.Marshal(m)
}

// prefillAnswer is the part of a prefill response the decoder reads.
type prefillAnswer struct {
	Usage *struct {
		Details *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	KVTransferParams json.RawMessage `json:"kv_transfer_params"`
}

func readPrefill(resp *http.Response) (prefillResult, error) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return prefillResult{}, &remotePrefillError{status: http.StatusBadGateway, err: err}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return prefillResult{}, &remotePrefillError{status: resp.StatusCode, err: fmt.Errorf("prefiller answered %d: %s", resp.StatusCode, bytes.TrimSpace(b))}
	}
	var a prefillAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		return prefillResult{}, &remotePrefillError{status: http.StatusBadGateway, err: fmt.Errorf("decoding the prefiller's answer: %w", err)}
	}
	res := prefillResult{by: resp.Header.Get(api.ServedByHeader)}
	if a.Usage != nil && a.Usage.Details != nil {
		res.cached = a.Usage.Details.CachedTokens
	}
	res.transferred = len(a.KVTransferParams) > 0 && string(a.KVTransferParams) != "null"
	return res, nil
}

// prefillFirst, for a decode simulator given a request naming a
// prefiller, has the prompt prefilled there and marks req as prefilled,
// naming the prefiller in the response. Other requests pass unchanged.
func (s *Server) prefillFirst(w http.ResponseWriter, r *http.Request, d dialect, req *apiRequest) error {
	hostPort := r.Header.Get(api.PrefillerHeader)
	if s.opts.Role != RoleDecode || hostPort == "" {
		return nil
	}
	res, err := s.remotePrefill(r.Context(), r, req.body, hostPort, d)
	if err != nil {
		return err
	}
	w.Header().Set(api.PrefilledByHeader, res.by)
	if res.transferred {
		req.Prefilled, req.PrefilledCached = true, res.cached
	}
	return nil
}
