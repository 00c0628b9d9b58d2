package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/warmroute/warmroute/api"
)

// generate serves one of the generation APIs: faults, decoding, admission,
// then a JSON or streamed answer.
func (s *Server) generate(d dialect) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outcome := s.serveGenerate(w, r, d)
		s.metrics.requests.WithLabelValues(d.name(), outcome).Inc()
	})
}

// serveGenerate answers r and returns its metrics outcome.
func (s *Server) serveGenerate(w http.ResponseWriter, r *http.Request, d dialect) string {
	ctx := r.Context()
	req, err := s.readRequest(w, r, d)
	if err != nil {
		return writeError(w, err)
	}
	if err := s.prefillFirst(w, r, d, &req); err != nil {
		return writeError(w, err)
	}
	seq, err := s.engine.Submit(ctx, req.Request)
	if err != nil {
		return writeError(w, err)
	}
	defer seq.Close()
	meta := s.newMeta(d, req.Model)
	if req.remoteDecode {
		meta.KVTransferParams = s.transferParams(seq)
	}
	if req.Stream {
		return s.stream(ctx, w, d, req, seq, meta)
	}
	return s.complete(ctx, w, d, seq, meta)
}

// readRequest reads the body, applies the fault headers, decodes the body
// and checks the model is served. The body is read before any injected
// delay because net/http notices a client hanging up only once the body has
// been consumed; a delay before that would outlive its client.
func (s *Server) readRequest(w http.ResponseWriter, r *http.Request, d dialect) (apiRequest, error) {
	f, err := parseFault(r.Header)
	if err != nil {
		return apiRequest{}, err
	}
	body, err := s.readBody(w, r)
	if err != nil {
		return apiRequest{}, err
	}
	if err := f.apply(r.Context()); err != nil {
		return apiRequest{}, err
	}
	req, err := d.decode(body)
	if err != nil {
		return apiRequest{}, err
	}
	if err := s.checkModel(&req.Request); err != nil {
		return apiRequest{}, err
	}
	req.FailPrefill, req.SilentStore = f.failPrefill, f.silentStore
	req.body = body
	return req, nil
}

// checkModel rejects unknown models and marks requests for a LoRA adapter.
func (s *Server) checkModel(req *Request) error {
	if !s.models[req.Model] {
		return fmt.Errorf("%w: the model %q does not exist", ErrUnknownModel, req.Model)
	}
	if s.loras[req.Model] {
		req.LoRA = req.Model
	}
	return nil
}

func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, fmt.Errorf("%w: limit is %d bytes", ErrBodyTooLarge, tooLarge.Limit)
	}
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	return body, nil
}

// complete decodes the whole sequence and answers with one JSON response.
func (s *Server) complete(ctx context.Context, w http.ResponseWriter, d dialect, seq *Sequence, meta responseMeta) string {
	var text strings.Builder
	for {
		tok, err := seq.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return writeError(w, err)
		}
		text.WriteString(tok.Text)
	}
	usage := usageBodyOf(seq.Usage(), s.opts.PromptTokensDetails)
	writeJSON(w, http.StatusOK, d.response(meta, text.String(), seq.FinishReason(), usage))
	return outcomeOK
}

// writeError answers err as an OpenAI error body and returns its outcome.
func writeError(w http.ResponseWriter, err error) string {
	status, errType, outcome := classify(err)
	writeJSON(w, status, api.ErrorResponse{Error: api.ErrorDetail{Message: err.Error(), Type: errType, Code: status}})
	return outcome
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		// Only the simulator's own types reach here; they always marshal.
		http.Error(w, "encoding response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

func (s *Server) listModels(w http.ResponseWriter, _ *http.Request) {
	list := modelList{Object: "list", Data: make([]modelCard, 0, len(s.opts.Models))}
	for _, m := range append(append([]string(nil), s.opts.Models...), s.opts.LoRAAdapters...) {
		list.Data = append(list.Data, modelCard{
			ID: m, Object: "model", Created: s.started, OwnedBy: "warmroute-sim", Root: m,
			MaxModelLen: s.opts.MaxModelLen,
		})
	}
	writeJSON(w, http.StatusOK, list)
}

// health answers 200 with an empty body, as vLLM does, once the server is
// serving at all.
func (s *Server) health(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }

// noRoute answers unknown paths and wrong methods with OpenAI error bodies
// rather than the mux's plain text.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	if knownPaths[r.URL.Path] {
		msg := fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path)
		writeJSON(w, http.StatusMethodNotAllowed, api.ErrorResponse{Error: api.ErrorDetail{
			Message: msg, Type: api.ErrTypeInvalidRequest, Code: http.StatusMethodNotAllowed}})
		return
	}
	msg := fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path)
	writeJSON(w, http.StatusNotFound, api.ErrorResponse{Error: api.ErrorDetail{
		Message: msg, Type: api.ErrTypeNotFound, Code: http.StatusNotFound}})
}

var knownPaths = map[string]bool{
	"/v1/completions": true, "/v1/chat/completions": true, "/v1/models": true,
	"/v1/responses": true, "/v1/messages": true,
	"/health": true, "/metrics": true, "/tokenize": true, "/reset_prefix_cache": true,
	"/debug/cache": true, "/debug/events": true, "/debug/restart": true, "/debug/reset_prefix_cache": true,
}
