package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestLogFlags(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantErr  bool
		wantJSON bool
		wantLogs []string // messages that must appear, out of debug, info, warn
	}{
		{"defaults", nil, false, false, []string{"info", "warn"}},
		{"json", []string{"--log-format", "json"}, false, true, []string{"info", "warn"}},
		{"debug", []string{"--log-level", "debug"}, false, false, []string{"debug", "info", "warn"}},
		{"warn, json", []string{"--log-level", "WARN", "--log-format=json"}, false, true, []string{"warn"}},
		{"bad format", []string{"--log-format", "logfmt"}, true, false, nil},
		{"bad level", []string{"--log-level", "loud"}, true, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			l := AddLogFlags(fs)
			err := fs.Parse(tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Parse: %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			var buf bytes.Buffer
			log := l.Logger(&buf)
			log.Debug("debug")
			log.Info("info")
			log.Warn("warn")
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if len(lines) != len(tt.wantLogs) {
				t.Fatalf("logged %q, want %v", lines, tt.wantLogs)
			}
			for i, line := range lines {
				var rec map[string]any
				isJSON := json.Unmarshal([]byte(line), &rec) == nil
				if isJSON != tt.wantJSON {
					t.Errorf("line %q: JSON %v, want %v", line, isJSON, tt.wantJSON)
				}
				if !strings.Contains(line, "msg="+tt.wantLogs[i]) && rec["msg"] != tt.wantLogs[i] {
					t.Errorf("line %q, want message %q", line, tt.wantLogs[i])
				}
			}
		})
	}
}
