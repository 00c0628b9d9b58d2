package openai

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// testLimit is the limit of the parser tables: small, so the cases over it
// stay readable.
const testLimit = 64

var long = strings.Repeat("x", testLimit)

var parserCases = []struct {
	name    string
	stream  string
	want    []string
	tooLong bool
}{
	{name: "openai stream", stream: "data: {\"a\":1}\n\ndata: [DONE]\n\n", want: []string{`{"a":1}`, "[DONE]"}},
	{name: "crlf and no space", stream: "data:x\r\n\r\ndata:y\r\n\r\n", want: []string{"x", "y"}},
	{name: "one space dropped, not two", stream: "data:  x\n\n", want: []string{" x"}},
	{name: "multi-line data", stream: "data: a\ndata: b\n\n", want: []string{"a\nb"}},
	{name: "comments and other fields", stream: ": ping\nevent: e\nid: 7\nretry: 5\ndata: d\n\n", want: []string{"d"}},
	{name: "fields that only start with data", stream: "datax: y\ndat: z\ndata: d\n\n", want: []string{"d"}},
	{name: "field without colon", stream: "data\n\n", want: []string{""}},
	{name: "empty data lines", stream: "data:\ndata:\n\n", want: []string{"\n"}},
	{name: "blank lines only", stream: "\n\n\r\n\n"},
	{name: "comment only", stream: ": keepalive\n\n"},
	{name: "event without data", stream: "event: ping\n\ndata: d\n\n", want: []string{"d"}},
	{name: "cut stream delivers the open event", stream: "data: a\n\ndata: b", want: []string{"a", "b"}},
	{name: "open event at the end", stream: "data: a\n", want: []string{"a"}},
	{name: "empty", stream: ""},
	{name: "line at the limit", stream: "data:" + long[5:] + "\n\n", want: []string{long[5:]}},
	{name: "line at the limit with crlf", stream: "data:" + long[5:] + "\r\n\r\n", want: []string{long[5:]}},
	{name: "line one over the limit with crlf", stream: "data:" + long[4:] + "\r\n\r\ndata: c\n\n",
		want: []string{"c"}, tooLong: true},
	{name: "line over the limit drops its event only", stream: "data: a\n\ndata:" + long + "\n\ndata: c\n\n",
		want: []string{"a", "c"}, tooLong: true},
	{name: "long line drops the rest of its event", stream: "data: " + long + "\ndata: b\n\ndata: c\n\n",
		want: []string{"c"}, tooLong: true},
	{name: "long comment drops its event", stream: ": " + long + "\ndata: b\n\ndata: c\n\n",
		want: []string{"c"}, tooLong: true},
	{name: "event data over the limit", stream: "data: " + long[:40] + "\ndata: " + long[:40] + "\n\ndata: c\n\n",
		want: []string{"c"}, tooLong: true},
	{name: "long last line without line end", stream: "data: a\n\ndata: " + long, want: []string{"a"}, tooLong: true},
	{name: "last line one over the limit", stream: "data: a\n\n" + long + "x", want: []string{"a"}, tooLong: true},
}

// parse feeds chunks to a parser and returns the events and whether any
// Feed returned ErrTooLong.
func parse(t testing.TB, limit int, chunks ...[]byte) (events []string, tooLong bool) {
	t.Helper()
	p := NewEventParser(limit, func(d []byte) { events = append(events, string(d)) })
	for _, c := range chunks {
		if err := p.Feed(c); err != nil {
			if !errors.Is(err, ErrTooLong) {
				t.Fatalf("Feed: %v", err)
			}
			tooLong = true
		}
	}
	if err := p.End(); err != nil {
		if !errors.Is(err, ErrTooLong) {
			t.Fatalf("End: %v", err)
		}
		tooLong = true
	}
	return events, tooLong
}

// TestEventParser feeds every case whole, split at every byte boundary, and
// byte by byte.
func TestEventParser(t *testing.T) {
	for _, tc := range parserCases {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte(tc.stream)
			check := func(how string, chunks ...[]byte) {
				t.Helper()
				got, tooLong := parse(t, testLimit, chunks...)
				if !slices.Equal(got, tc.want) || tooLong != tc.tooLong {
					t.Fatalf("%s: events %q, too long %v; want %q, %v", how, got, tooLong, tc.want, tc.tooLong)
				}
			}
			check("whole", b)
			for i := range b {
				check("split", b[:i], b[i:])
			}
			check("byte by byte", slices.Collect(slices.Chunk(b, 1))...)
		})
	}
}

// TestEventParserBounded checks what a parser holds between chunks, however
// long the lines it is fed.
func TestEventParserBounded(t *testing.T) {
	huge := "data: " + strings.Repeat("y", 5000) + "\n\n"
	tests := []struct {
		name  string
		chunk int
	}{
		{"byte by byte", 1},
		{"in small chunks", 100},
		{"whole", len(huge)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const limit = 1024
			var events int
			p := NewEventParser(limit, func([]byte) { events++ })
			stream := []byte(huge + "data: ok\n\n" + "data: " + strings.Repeat("z", 900) + "\ndata: a\n\n")
			for c := range slices.Chunk(stream, tt.chunk) {
				p.Feed(c)
				// A line may hold one byte more: the CR of a CRLF.
				if held := max(cap(p.line), cap(p.buf)); held > limit+1 {
					t.Fatalf("parser holds %d bytes, want at most %d", held, limit+1)
				}
			}
			p.End()
			if events != 2 {
				t.Fatalf("%d events, want 2", events)
			}
		})
	}
}

// TestEventParserInPlace checks the hot path: events read whole from one
// chunk cost no allocation.
func TestEventParserInPlace(t *testing.T) {
	chunk := []byte("data: " + tokenEvent + "\n\n")
	n := 0
	p := NewEventParser(0, func(d []byte) {
		if HasUsage(d) {
			n++
		}
	})
	if allocs := testing.AllocsPerRun(100, func() { p.Feed(chunk) }); allocs != 0 {
		t.Fatalf("Feed allocates %v times per event", allocs)
	}
}

// TestEventParserReuse checks that a parser is ready for a new stream after
// End, with nothing left over from the last.
func TestEventParserReuse(t *testing.T) {
	var got []string
	p := NewEventParser(testLimit, func(d []byte) { got = append(got, string(d)) })
	p.Feed([]byte("data: a\ndata: b"))
	p.End()
	p.Feed([]byte("data: c\n\n"))
	p.End()
	if want := []string{"a\nb", "c"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

func TestIsDone(t *testing.T) {
	tests := []struct {
		data string
		want bool
	}{
		{"[DONE]", true},
		{" [DONE]", false},
		{"[DONE]\n", false},
		{"{}", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.data, func(t *testing.T) {
			if got := IsDone([]byte(tt.data)); got != tt.want {
				t.Fatalf("IsDone(%q) = %v", tt.data, got)
			}
		})
	}
}
