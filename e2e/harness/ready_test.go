package harness

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitReady(t *testing.T) {
	var calls atomic.Int32
	becomesReady := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) < 3 {
			http.Error(w, "warming up", http.StatusServiceUnavailable)
		}
	}))
	defer becomesReady.Close()
	neverReady := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer neverReady.Close()

	tests := []struct {
		name    string
		url     string
		script  string // a process to watch; empty for none
		wantErr error
	}{
		{name: "ready after retries", url: becomesReady.URL},
		{name: "never ready", url: neverReady.URL, wantErr: ErrNotReady},
		{name: "process dies", url: neverReady.URL, script: "exit 1", wantErr: ErrExited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p *Process
			if tt.script != "" {
				var err error
				if p, err = Start("dies", t.TempDir(), "/bin/sh", "-c", tt.script); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			err := WaitReady(ctx, tt.url, p)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("WaitReady() = %v, want %v", err, tt.wantErr)
			}
		})
	}
}
