package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// LogTimes returns, in order, the times of the JSON log lines (--log-format
// json) in path whose msg is msg and whose attributes include all of attrs:
// when the process itself saw what the line reports.
func LogTimes(path, msg string, attrs map[string]string) ([]time.Time, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading log: %w", err)
	}
	var out []time.Time
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // the harness's own start and exit lines
		}
		var rec map[string]any
		if json.Unmarshal(line, &rec) != nil || rec["msg"] != msg || !hasAttrs(rec, attrs) {
			continue
		}
		ts, _ := rec["time"].(string)
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			return nil, fmt.Errorf("log line time %q: %w", ts, err)
		}
		out = append(out, t)
	}
	return out, sc.Err()
}

func hasAttrs(rec map[string]any, attrs map[string]string) bool {
	for k, v := range attrs {
		if s, _ := rec[k].(string); s != v {
			return false
		}
	}
	return true
}

// FirstLogAfter is the first LogTimes entry not before since; ok is false
// when there is none yet.
func FirstLogAfter(path, msg string, attrs map[string]string, since time.Time) (time.Time, bool, error) {
	ts, err := LogTimes(path, msg, attrs)
	if err != nil {
		return time.Time{}, false, err
	}
	for _, t := range ts {
		if !t.Before(since) {
			return t, true, nil
		}
	}
	return time.Time{}, false, nil
}
