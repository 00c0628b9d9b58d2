package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// profiler records CPU profiles of the router (its opt-in /debug/pprof on
// the debug address) during the Envoy + warmroute runs, one file per body
// size and round, so a run's router CPU can be broken down by function.
// net/http/pprof profiles for a fixed number of seconds and cannot be cut
// short without losing the profile, so a profile covers the first seconds
// of its run (or the run and the idle ingestion after it, when the run is
// shorter); its samples divided by the run's requests are per request only
// when the run lasts at least that long.
type profiler struct {
	dir     string // "" records nothing
	debug   string // the router's debug address
	seconds int
}

// start begins a profile named for size, concurrency and round and returns a function
// that waits for it and writes it.
func (p profiler) start(ctx context.Context, size, level, round int) func() error {
	if p.dir == "" {
		return func() error { return nil }
	}
	path := filepath.Join(p.dir, fmt.Sprintf("cpu-%d-c%d-round%d.pprof", size, level, round+1))
	done := make(chan error, 1)
	go func() { done <- p.fetch(ctx, path) }()
	return func() error { return <-done }
}

func (p profiler) fetch(ctx context.Context, path string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(p.seconds)*time.Second+30*time.Second)
	defer cancel()
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", p.debug, p.seconds)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profiling the router: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("profiling the router: status %d: %s", resp.StatusCode, b)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("profiling the router: %w", err)
	}
	return f.Close()
}
