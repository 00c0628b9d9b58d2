package tokenizer

import (
	"context"
	"math/rand/v2"
	"slices"
)

// Drift compares the local tokenizer with the engine's /tokenize on a
// sample of requests and counts disagreements, so a wrong tokenizer shows
// up in metrics instead of silently ruining prefix hit rates.
//
// Drift is safe for concurrent use. Its methods call the engine
// synchronously; the caller decides which goroutine pays for that. The
// zero value is not usable; use NewDrift.
type Drift struct {
	local   *Tokenizer
	chat    *ChatTemplate
	remote  *Remote
	rate    float64
	metrics *Metrics
}

// NewDrift samples a fraction rate (0..1) of requests. chat may be nil
// when only completion prompts are checked.
func NewDrift(local *Tokenizer, chat *ChatTemplate, remote *Remote, rate float64, m *Metrics) *Drift {
	return &Drift{local: local, chat: chat, remote: remote, rate: min(max(rate, 0), 1), metrics: m}
}

// Sampled reports whether this request should be checked.
func (d *Drift) Sampled() bool { return d.rate > 0 && rand.Float64() < d.rate }

// CheckPrompt encodes a completion prompt both ways and records the
// outcome; it returns whether they agree.
func (d *Drift) CheckPrompt(ctx context.Context, prompt string, addSpecial bool) (bool, error) {
	local, lerr := d.local.Encode(prompt, addSpecial)
	remote, rerr := d.remote.Tokenize(ctx, prompt, addSpecial)
	return d.record("prompt", local, remote, lerr, rerr)
}

// CheckChat renders and encodes a chat request both ways. A request with
// media is encoded locally only up to it (see mediaTag), so it agrees when
// the engine's ids start with the local ones.
func (d *Drift) CheckChat(ctx context.Context, req ChatRequest) (bool, error) {
	if d.chat == nil {
		return false, ErrTemplate
	}
	local, media, lerr := d.local.encodeChat(d.chat, req)
	remote, rerr := d.remote.TokenizeChat(ctx, req)
	if media && lerr == nil && rerr == nil && len(remote) >= len(local) {
		remote = remote[:len(local)]
	}
	return d.record("chat", local, remote, lerr, rerr)
}

func (d *Drift) record(mode string, local, remote []uint32, lerr, rerr error) (bool, error) {
	result, err := "agree", error(nil)
	switch {
	case rerr != nil:
		result, err = "error", rerr
	case lerr != nil:
		result, err = "disagree", lerr
	case !slices.Equal(local, remote):
		result = "disagree"
	}
	d.metrics.driftChecks.WithLabelValues(mode, result).Inc()
	return result == "agree", err
}
