package scorer

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/warmroute/warmroute/tokenizer"
)

// DriftTokens encodes locally and, for a sample of requests, compares the
// result with an engine's /tokenize. The comparison runs on Run's goroutine,
// never on the request path; when its queue is full the sample is dropped and
// counted. Safe for concurrent use; build it with NewDriftTokens.
type DriftTokens struct {
	local   *LocalTokens
	rate    float64
	metrics *tokenizer.Metrics
	client  *http.Client
	timeout time.Duration
	jobs    chan driftJob
	dropped atomic.Int64
}

type driftJob struct {
	endpoint string
	chat     *tokenizer.ChatRequest // nil for a completion prompt
	prompt   string
	special  bool // the prompt's add_special_tokens
}

// driftQueue bounds the samples waiting for a comparison.
const driftQueue = 64

// NewDriftTokens samples a fraction rate of requests; m records the outcomes.
func NewDriftTokens(local *LocalTokens, rate float64, m *tokenizer.Metrics, client *http.Client, timeout time.Duration) *DriftTokens {
	return &DriftTokens{local: local, rate: rate, metrics: m, client: client, timeout: timeout, jobs: make(chan driftJob, driftQueue)}
}

// Tokens implements Tokens with the local encoding.
func (d *DriftTokens) Tokens(ctx context.Context, req *Request, endpoints []string) ([]uint32, error) {
	return d.AppendTokens(ctx, req, endpoints, nil)
}

// AppendTokens implements TokenAppender. A sampled comparison re-encodes
// from the request, so it never holds dst.
func (d *DriftTokens) AppendTokens(ctx context.Context, req *Request, endpoints []string, dst []uint32) ([]uint32, error) {
	ids, err := d.local.AppendTokens(ctx, req, endpoints, dst)
	if err == nil && len(endpoints) > 0 && rand.Float64() < d.rate {
		d.sample(req, endpoints[rand.IntN(len(endpoints))])
	}
	return ids, err
}

func (d *DriftTokens) sample(req *Request, endpoint string) {
	job := driftJob{endpoint: endpoint}
	if req.Kind == KindChat {
		cr, err := chatRequest(req)
		if err != nil {
			return
		}
		job.chat = &cr
	} else if text, ids, ok := firstPrompt(req); ok && ids == nil {
		job.prompt, job.special = text, req.AddSpecialTokens()
	} else {
		return // caller-given ids: nothing to compare
	}
	select {
	case d.jobs <- job:
	default:
		d.dropped.Add(1)
	}
}

// Dropped is how many samples were skipped because the queue was full.
func (d *DriftTokens) Dropped() int64 { return d.dropped.Load() }

// Run performs queued comparisons until ctx ends. Errors from the engine are
// counted by the tokenizer metrics, not returned: a failing engine must not
// stop drift checking for the others.
func (d *DriftTokens) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case job := <-d.jobs:
			d.check(ctx, job)
		}
	}
}

func (d *DriftTokens) check(ctx context.Context, job driftJob) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	remote := tokenizer.NewRemote("http://"+job.endpoint, d.client)
	drift := tokenizer.NewDrift(d.local.tk, d.local.chat, remote, 1, d.metrics)
	if job.chat != nil {
		drift.CheckChat(ctx, *job.chat)
		return
	}
	drift.CheckPrompt(ctx, job.prompt, job.special)
}
