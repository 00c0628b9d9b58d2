package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// bodies makes /v1/completions bodies of one exact size. Every body is
// distinct (a counter leads the prompt) so no request rides on an earlier
// one's cache entry in the router. Safe for concurrent use.
type bodies struct {
	size   int
	filler []byte
	next   atomic.Int64
}

func newBodies(size int) *bodies {
	filler := bytes.Repeat([]byte("lorem ipsum dolor sit amet "), size/27+1)
	return &bodies{size: size, filler: filler}
}

// get returns the next body: {"model":...,"max_tokens":1,"prompt":"<n> lorem..."}.
func (b *bodies) get() []byte {
	head := `{"model":"` + model + `","max_tokens":1,"prompt":"` + strconv.FormatInt(b.next.Add(1), 10) + " "
	const tail = `"}`
	pad := max(b.size-len(head)-len(tail), 0)
	out := make([]byte, 0, len(head)+pad+len(tail))
	out = append(out, head...)
	out = append(out, b.filler[:pad]...)
	return append(out, tail...)
}

// driver sends requests to url from concurrency workers, each waiting for
// its answer before sending again (a closed loop), over keep-alive
// connections.
type driver struct {
	client      *http.Client
	url         string
	concurrency int
	bodies      *bodies
	maxFailures int
}

// run sends n requests, or as many as fit in limit, and returns their
// latencies. It fails when more than maxFailures requests fail.
func (d driver) run(ctx context.Context, n int, limit time.Duration) (stats, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var (
		issued   atomic.Int64
		failures atomic.Int64
		lastErr  atomic.Value
		mu       sync.Mutex
		all      []time.Duration
		wg       sync.WaitGroup
	)
	start := time.Now()
	for range d.concurrency {
		wg.Go(func() {
			var mine []time.Duration
			for issued.Add(1) <= int64(n) && ctx.Err() == nil {
				lat, err := d.once(ctx)
				if err != nil {
					if ctx.Err() == nil {
						lastErr.Store(err)
						if failures.Add(1) > int64(d.maxFailures) {
							cancel()
						}
					}
					continue
				}
				mine = append(mine, lat)
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if f := failures.Load(); f > int64(d.maxFailures) {
		return stats{}, fmt.Errorf("%d requests failed, last: %v", f, lastErr.Load())
	}
	return summarize(all, time.Since(start)), nil
}

func (d driver) once(ctx context.Context) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(d.bodies.get()))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	lat := time.Since(start)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d: %.200s", resp.StatusCode, body)
	}
	return lat, nil
}
