package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/warmroute/warmroute/api"
)

// sseWriter writes server-sent events, flushing each so a client sees every
// token when it is generated.
type sseWriter struct {
	w       io.Writer
	flusher http.Flusher
}

func newSSEWriter(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher) // without a Flusher, events arrive when the handler returns
	return &sseWriter{w: w, flusher: f}
}

// send writes v as one "data:" event; an error means the client is gone.
func (s *sseWriter) send(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding stream chunk: %w", err)
	}
	return s.write(body)
}

func (s *sseWriter) write(data []byte) error {
	buf := make([]byte, 0, len(data)+8)
	buf = append(append(append(buf, "data: "...), data...), "\n\n"...)
	if _, err := s.w.Write(buf); err != nil {
		return fmt.Errorf("writing stream chunk: %w: %w", errClientGone, err)
	}
	if s.flusher != nil {
		s.flusher.Flush()
	}
	return nil
}

func (s *sseWriter) done() error { return s.write([]byte("[DONE]")) }

// stream answers with one chunk per token, an optional usage chunk and
// [DONE]. Once the 200 header is out, a failure can only end the stream: an
// error event is sent if the client is still there to read it.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, d dialect, req apiRequest, seq *Sequence, meta responseMeta) string {
	sw := newSSEWriter(w)
	if p := d.preamble(meta); p != nil {
		if err := sw.send(p); err != nil {
			return outcomeCancelled
		}
	}
	if err := s.streamTokens(ctx, sw, d, seq, meta); err != nil {
		return streamFailed(ctx, sw, err)
	}
	if req.IncludeUsage {
		if err := sw.send(d.usageChunk(meta, usageBodyOf(seq.Usage(), s.opts.PromptTokensDetails))); err != nil {
			return outcomeCancelled
		}
	}
	if err := sw.done(); err != nil {
		return outcomeCancelled
	}
	return outcomeOK
}

func (s *Server) streamTokens(ctx context.Context, sw *sseWriter, d dialect, seq *Sequence, meta responseMeta) error {
	for {
		tok, err := seq.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var finish *string
		if seq.Done() {
			reason := seq.FinishReason()
			finish = &reason
		}
		if err := sw.send(d.chunk(meta, tok.Text, finish)); err != nil {
			return err
		}
	}
}

func streamFailed(ctx context.Context, sw *sseWriter, err error) string {
	status, errType, outcome := classify(err)
	if ctx.Err() != nil || outcome == outcomeCancelled {
		return outcomeCancelled
	}
	sw.send(api.ErrorResponse{Error: api.ErrorDetail{Message: err.Error(), Type: errType, Code: status}})
	return outcome
}
