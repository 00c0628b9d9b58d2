package harness

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// maxSSELine bounds one line of an event stream; simulator chunks are small,
// so a longer line means a broken stream, not a big token.
const maxSSELine = 1 << 20

// ReadSSE reads a text/event-stream body and returns the data of each event
// in order (multi-line data joined with "\n"). Comments and fields other than
// data are ignored, as is an unterminated last event, which is what a client
// sees when a stream is cut: it is reported by the caller's checks, not here.
func ReadSSE(r io.Reader) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxSSELine)
	var events, data []string
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if data != nil {
				events = append(events, strings.Join(data, "\n"))
				data = nil
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		if field == "data" {
			data = append(data, strings.TrimPrefix(value, " "))
		}
	}
	if err := sc.Err(); err != nil {
		return events, fmt.Errorf("reading event stream: %w", err)
	}
	return events, nil
}
