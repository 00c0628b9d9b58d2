package harness

import (
	"slices"
	"strings"
	"testing"
)

var sseTests = []struct {
	name string
	in   string
	want []string
}{
	{"openai stream", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []string{`{"a":1}`, "[DONE]"}},
	{"crlf and no space", "data:x\r\n\r\n", []string{"x"}},
	{"multi-line data", "data: a\ndata: b\n\n", []string{"a\nb"}},
	{"comments and other fields", ": ping\nevent: e\nid: 7\ndata: d\n\n", []string{"d"}},
	{"cut stream drops partial event", "data: a\n\ndata: b", []string{"a"}},
	{"empty data", "data\n\n", []string{""}},
	{"blank lines only", "\n\n\n", nil},
}

func TestReadSSE(t *testing.T) {
	for _, tt := range sseTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadSSE(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("ReadSSE(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestReadSSELineTooLong(t *testing.T) {
	in := "data: " + strings.Repeat("x", maxSSELine+1) + "\n\n"
	if _, err := ReadSSE(strings.NewReader(in)); err == nil {
		t.Fatal("ReadSSE accepted a line over the limit")
	}
}

// FuzzReadSSE checks that ReadSSE never panics and that what it returns
// survives being written back as an event stream and read again.
func FuzzReadSSE(f *testing.F) {
	for _, tt := range sseTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		events, err := ReadSSE(strings.NewReader(in))
		if err != nil || len(in) > maxSSELine/2 {
			return // re-encoding adds "data: " and could cross the line limit
		}
		var b strings.Builder
		for _, e := range events {
			for _, line := range strings.Split(e, "\n") {
				b.WriteString("data: " + line + "\n")
			}
			b.WriteString("\n")
		}
		again, err := ReadSSE(strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(events, again) {
			t.Fatalf("round trip changed events: %q -> %q", events, again)
		}
	})
}
