package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/warmroute/warmroute/extproc"
	"github.com/warmroute/warmroute/openai"
)

// viaMessages sends agent turns (whole /v1/messages bodies) to url.
func viaMessages(c *http.Client, url string) target {
	return func(ctx context.Context, body string, fail bool) (outcome, error) {
		resp, start, err := post(ctx, c, url, []byte(body), fail)
		if err != nil {
			return outcome{}, err
		}
		defer resp.Body.Close()
		o, err := readMessagesStream(resp.Body, start)
		o.ServedBy = resp.Header.Get(servedByHeader)
		return o, err
	}
}

// messagesEvent is the part of a Messages stream event the client reads.
type messagesEvent struct {
	Type  string `json:"type"`
	Delta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"delta"`
	Usage *struct {
		InputTokens int  `json:"input_tokens"`
		CacheRead   *int `json:"cache_read_input_tokens"`
	} `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// readMessagesStream reads an Anthropic Messages SSE stream: the time of the
// first text delta (from start) and the final usage of message_delta, where
// input_tokens excludes the cache read, so the prompt is their sum. A stream
// without message_stop, without cache_read_input_tokens or with an error
// event is an error, never a miss.
func readMessagesStream(r io.Reader, start time.Time) (outcome, error) {
	var o outcome
	events := openai.NewEventReader(r, openai.DefaultLimit)
	usage, done := false, false
	for !done {
		data, err := events.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return o, err
		}
		var ev messagesEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return o, fmt.Errorf("decoding stream event: %w", err)
		}
		switch ev.Type {
		case "content_block_delta":
			if o.TTFT == 0 && ev.Delta.Text != "" {
				o.TTFT = time.Since(start)
			}
		case "message_delta":
			if ev.Usage == nil || ev.Usage.CacheRead == nil {
				return o, errNoUsage
			}
			if ev.Usage.InputTokens < 0 || *ev.Usage.CacheRead < 0 {
				return o, fmt.Errorf("%w: input_tokens %d, cache_read_input_tokens %d", errBadUsage, ev.Usage.InputTokens, *ev.Usage.CacheRead)
			}
			usage = true
			o.Prompt, o.Cached = ev.Usage.InputTokens+*ev.Usage.CacheRead, *ev.Usage.CacheRead
		case "message_stop":
			done = true
		case "error":
			if ev.Error == nil {
				return o, errStreamError
			}
			return o, fmt.Errorf("%w: %s: %s", errStreamError, ev.Error.Type, ev.Error.Message)
		}
	}
	return o, streamEnd(o, done, usage)
}

// viaOracleMessages sends agent turns straight to the simulator the oracle
// picks. The oracle tokenizes the chat the request converts to (the
// router's own /v1/messages conversion, the one the simulator renders),
// with the simulator's vLLM-style /tokenize for messages and tools.
func viaOracleMessages(c *http.Client, o *oracle) target {
	return func(ctx context.Context, body string, fail bool) (outcome, error) {
		tb, err := chatTokenizeBody(body)
		if err != nil {
			return outcome{}, err
		}
		i, err := o.pickFor(ctx, tb)
		if err != nil {
			return outcome{}, err
		}
		defer o.done(i)
		return viaMessages(c, "http://"+o.sims[i]+"/v1/messages")(ctx, body, fail)
	}
}

// chatTokenizeBody is the /tokenize request for a /v1/messages body's
// rendered chat.
func chatTokenizeBody(body string) ([]byte, error) {
	req, err := extproc.ParseRequest("/v1/messages", []byte(body))
	if err != nil {
		return nil, fmt.Errorf("converting agent request: %w", err)
	}
	msgs := make([]json.RawMessage, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = m.Raw
	}
	tb := map[string]any{"model": model, "messages": msgs, "add_generation_prompt": !req.NoGenerationPrompt}
	if len(req.Tools) > 0 {
		tb["tools"] = req.Tools
	}
	if len(req.ChatTemplateKwargs) > 0 {
		tb["chat_template_kwargs"] = req.ChatTemplateKwargs
	}
	out, err := json.Marshal(tb)
	if err != nil {
		return nil, fmt.Errorf("encoding tokenize request: %w", err)
	}
	return out, nil
}
