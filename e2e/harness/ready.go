package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ReadyTimeout bounds how long a Stack waits for each process to be ready.
const ReadyTimeout = 30 * time.Second

// pollInterval is short because start-up time is the bulk of every e2e test.
const pollInterval = 25 * time.Millisecond

// WaitReady polls url with GET until it answers 200. It gives up with an
// error wrapping ErrExited as soon as p ends (p may be nil), and with one
// wrapping ErrNotReady when ctx ends; both carry the last probe result.
func WaitReady(ctx context.Context, url string, p *Process) error {
	client := &http.Client{Timeout: time.Second}
	var exited <-chan struct{}
	if p != nil {
		exited = p.Exited()
	}
	last := "no probe yet"
	for {
		ok, status := probe(ctx, client, url)
		if ok {
			return nil
		}
		last = status
		select {
		case <-exited:
			return fmt.Errorf("waiting for %s: %w (last probe: %s)", url, p.ExitErr(), last)
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w: %w (last probe: %s)", url, ErrNotReady, ctx.Err(), last)
		case <-time.After(pollInterval):
		}
	}
}

func probe(ctx context.Context, client *http.Client, url string) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode == http.StatusOK {
		return true, ""
	}
	return false, fmt.Sprintf("%s: %q", resp.Status, body)
}
