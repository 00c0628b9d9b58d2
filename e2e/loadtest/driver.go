package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// bodies makes /v1/completions bodies of one exact size from English prose.
// Every body is distinct (a counter leads the prompt, and each starts at its
// own offset in the prose), so no request rides on an earlier one's prefix
// in the router or the simulators, while the words repeat as a real corpus's
// do (the tokenizer's word cache is warm, as in a running router). Safe for
// concurrent use.
type bodies struct {
	size  int
	prose string // JSON-safe: no quotes, backslashes or control characters
	next  atomic.Int64
}

func newBodies(size int, prose string) *bodies { return &bodies{size: size, prose: prose} }

// get returns the next body: {"model":...,"max_tokens":1,"prompt":"<n> <prose>"}.
func (b *bodies) get() []byte {
	n := b.next.Add(1)
	head := `{"model":"` + model + `","max_tokens":1,"prompt":"` + strconv.FormatInt(n, 10) + " "
	const tail = `"}`
	pad := max(b.size-len(head)-len(tail), 0)
	out := make([]byte, 0, len(head)+pad+len(tail))
	out = append(out, head...)
	if span := len(b.prose) - pad; span > 0 {
		start := runeStart(b.prose, int(n*7919%int64(span)))
		text := b.prose[start : start+pad]
		// Cut at a rune boundary and pad with spaces to the exact size.
		cut := len(text)
		for cut > 0 && !utf8.ValidString(text[:cut]) {
			cut--
		}
		out = append(out, text[:cut]...)
		for range len(text) - cut {
			out = append(out, ' ')
		}
	} else {
		for range pad {
			out = append(out, ' ')
		}
	}
	return append(out, tail...)
}

// runeStart moves i back to the start of the rune it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// loadProse reads at least n bytes of English prose from the tokenizer's
// golden corpus (its documents over 2,000 bytes, repeated), made safe to
// put inside a JSON string unescaped.
func loadProse(path string, n int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading prose: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", fmt.Errorf("reading prose: %w", err)
	}
	var g struct {
		Texts []string `json:"texts"`
	}
	if err := json.NewDecoder(zr).Decode(&g); err != nil {
		return "", fmt.Errorf("reading prose: %w", err)
	}
	var sb strings.Builder
	for sb.Len() < n {
		wrote := false
		for _, s := range g.Texts {
			if len(s) > 2000 && utf8.ValidString(s) {
				sb.WriteString(jsonSafe(s))
				sb.WriteString(" ")
				wrote = true
			}
		}
		if !wrote {
			return "", errors.New("reading prose: the corpus has no long documents")
		}
	}
	return sb.String(), nil
}

// jsonSafe replaces what a JSON string cannot hold unescaped: quotes,
// backslashes and control characters.
func jsonSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '"':
			return '\''
		case r == '\\':
			return '/'
		case r < 0x20:
			return ' '
		}
		return r
	}, s)
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
