package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/warmroute/warmroute/openai"
)

// maxMaxTokens is what every request asks to generate: enough for a stream
// with several chunks, little enough that decode does not dominate a run.
const maxTokens = 8

// servedByHeader is the simulator's answer to "who served this".
const servedByHeader = "x-warmroute-served-by"

// outcome is one request's result as the client saw it.
type outcome struct {
	TTFT     time.Duration // send to first streamed token
	Prompt   int           // usage.prompt_tokens
	Cached   int           // usage.prompt_tokens_details.cached_tokens
	ServedBy string
}

type completionRequest struct {
	Model         string         `json:"model"`
	Prompt        string         `json:"prompt"`
	MaxTokens     int            `json:"max_tokens"`
	Stream        bool           `json:"stream"`
	StreamOptions map[string]any `json:"stream_options"`
}

// failPrefillHeader makes the simulator fail a request after admission,
// storing no block and publishing no event.
const failPrefillHeader = "x-sim-fail-prefill"

// complete sends prompt as a streaming completion to url and reads the
// stream to its end. With fail the simulator is told to fail the prefill.
func complete(ctx context.Context, c *http.Client, url, prompt string, fail bool) (outcome, error) {
	body, err := json.Marshal(completionRequest{Model: model, Prompt: prompt, MaxTokens: maxTokens,
		Stream: true, StreamOptions: map[string]any{"include_usage": true}})
	if err != nil {
		return outcome{}, fmt.Errorf("encoding request: %w", err)
	}
	resp, start, err := post(ctx, c, url, body, fail)
	if err != nil {
		return outcome{}, err
	}
	defer resp.Body.Close()
	o, err := readStream(resp.Body, start)
	o.ServedBy = resp.Header.Get(servedByHeader)
	return o, err
}

// post sends body as JSON to url and returns the 200 answer and when it was
// sent. With fail the simulator is told to fail the prefill.
func post(ctx context.Context, c *http.Client, url string, body []byte, fail bool) (*http.Response, time.Time, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("making request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if fail {
		req.Header.Set(failPrefillHeader, "true")
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return nil, start, fmt.Errorf("sending request: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, start, &statusError{Code: resp.StatusCode, Body: string(msg)}
	}
	return resp, start, nil
}

// readStream reads an SSE completion stream: the time of the first chunk
// with text (from start), and the usage of the final chunk. A stream without
// usage, or cut before [DONE], is an error: the run must not count it as a
// miss or a hit.
func readStream(r io.Reader, start time.Time) (outcome, error) {
	var o outcome
	events := openai.NewEventReader(r, openai.DefaultLimit)
	usage, done := false, false
	for {
		data, err := events.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return o, err
		}
		if done = openai.IsDone(data); done {
			break
		}
		ch, err := openai.DecodeChunk(data)
		if err != nil {
			return o, fmt.Errorf("decoding stream chunk: %w", err)
		}
		if o.TTFT == 0 && ch.HasContent() {
			o.TTFT = time.Since(start)
		}
		if ch.Usage != nil {
			usage = true
			o.Prompt = ch.Usage.Prompt()
			if c := ch.Usage.Cached(); c != nil {
				o.Cached = *c
			}
		}
	}
	return o, streamEnd(o, done, usage)
}

// streamEnd judges a stream read to its end: cut before its last event,
// without usage, or without a token is an error, never a miss.
func streamEnd(o outcome, done, usage bool) error {
	switch {
	case !done:
		return errStreamCut
	case !usage:
		return errNoUsage
	case o.TTFT == 0:
		return errNoTokens
	}
	return nil
}
