package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTTLCommand(t *testing.T) {
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/ttl" || r.URL.Query().Get("format") != "text" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "mode static  percentile p99\n")
	}))
	defer admin.Close()
	tests := []struct {
		name    string
		args    []string
		wantOut string
		wantErr string
	}{
		{"no command", nil, "", "missing command"},
		{"unknown command", []string{"tune"}, "", `unknown command "tune"`},
		{"advise without admin", []string{"advise"}, "", "want --debug-url"},
		{"advise", []string{"advise", "--debug-url", admin.URL}, "mode static  percentile p99\n", ""},
		{"advise, admin down", []string{"advise", "--debug-url", "http://127.0.0.1:1"}, "", "reading router debug endpoint"},
		{"validate without target", []string{"validate", "--model", "m", "--block-size", "16", "--gaps", "10ms"}, "", "target"},
		{"validate mixing models", []string{"validate", "--model", "a", "--model", "b"}, "", "cache identity must stay fixed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := runTTL(context.Background(), tt.args, &out, &errOut)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
			if out.String() != tt.wantOut {
				t.Errorf("stdout %q, want %q", out.String(), tt.wantOut)
			}
		})
	}
}

// TestTTLLogFlagsBeforeTheCommand: flags given to ttl reach the command.
func TestTTLLogFlagsBeforeTheCommand(t *testing.T) {
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "table\n")
	}))
	defer admin.Close()
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"before", []string{"--log-format", "json", "--log-level", "debug", "advise", "--debug-url", admin.URL}, `"level":"DEBUG"`},
		{"after", []string{"advise", "--log-format=json", "--log-level=debug", "--debug-url", admin.URL}, `"level":"DEBUG"`},
		{"command's own wins", []string{"--log-format", "json", "advise", "--log-format", "text", "--log-level", "debug", "--debug-url", admin.URL}, "level=DEBUG"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if err := runTTL(context.Background(), tt.args, &out, &errOut); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(errOut.String(), tt.want) || out.String() != "table\n" {
				t.Errorf("stdout %q, stderr %q; want the table and a log line with %s", out.String(), errOut.String(), tt.want)
			}
		})
	}
}
