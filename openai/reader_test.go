package openai

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll reads a stream with an EventReader at the parser tables' limit.
func readAll(src io.Reader) ([]string, error) {
	r := NewEventReader(src, testLimit)
	var events []string
	for {
		d, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return events, err
		}
		events = append(events, string(d))
	}
}

// TestEventReader reads the parser table through a reader: the same events,
// and an error where the parser reported a line over the limit (the reader
// stops there).
func TestEventReader(t *testing.T) {
	sources := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte at a time", iotest.OneByteReader},
		{"data with EOF", iotest.DataErrReader},
	}
	for _, tc := range parserCases {
		for _, src := range sources {
			t.Run(tc.name+"/"+src.name, func(t *testing.T) {
				got, err := readAll(src.wrap(strings.NewReader(tc.stream)))
				if tc.tooLong {
					if !errors.Is(err, ErrTooLong) || !strings.Contains(err.Error(), "limit 64 bytes") {
						t.Fatalf("error %v, want ErrTooLong naming the limit", err)
					}
					if !isPrefix(got, tc.want) {
						t.Fatalf("events %q before the error, want a prefix of %q", got, tc.want)
					}
					return
				}
				if err != nil || !slices.Equal(got, tc.want) {
					t.Fatalf("events %q, error %v; want %q", got, err, tc.want)
				}
			})
		}
	}
}

func isPrefix(got, want []string) bool {
	return len(got) <= len(want) && slices.Equal(got, want[:len(got)])
}

func TestEventReaderSourceError(t *testing.T) {
	boom := errors.New("connection reset")
	src := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	got, err := readAll(src)
	if !errors.Is(err, boom) || !slices.Equal(got, []string{"a"}) {
		t.Fatalf("events %q, error %v; want [a] and the source's error", got, err)
	}
}

func TestReadEvents(t *testing.T) {
	tests := []struct {
		name    string
		stream  string
		want    []string
		tooLong bool
	}{
		{name: "stream", stream: "data: {}\n\ndata: [DONE]\n\n", want: []string{"{}", "[DONE]"}},
		{name: "line over DefaultLimit", stream: "data: a\n\ndata: " + strings.Repeat("x", DefaultLimit) + "\n\n",
			want: []string{"a"}, tooLong: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, err := ReadEvents(strings.NewReader(tt.stream))
			if errors.Is(err, ErrTooLong) != tt.tooLong || err != nil && !tt.tooLong {
				t.Fatalf("error %v, want too long %v", err, tt.tooLong)
			}
			var got []string
			for _, e := range events {
				got = append(got, string(e))
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("events %q, want %q", got, tt.want)
			}
		})
	}
}
