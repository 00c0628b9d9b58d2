package openai

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzEventParser checks that any stream, split anywhere, parses as it does
// whole, that the reader agrees with the parser, and that the parser's
// buffers stay within the limit.
func FuzzEventParser(f *testing.F) {
	for _, tc := range parserCases {
		f.Add([]byte(tc.stream), uint16(3))
	}
	f.Fuzz(func(t *testing.T, stream []byte, split uint16) {
		whole, tooLong := parse(t, testLimit, stream)
		i := int(split) % (len(stream) + 1)
		if got, tl := parse(t, testLimit, stream[:i], stream[i:]); !slices.Equal(got, whole) || tl != tooLong {
			t.Fatalf("split at %d: %q, %v; whole: %q, %v", i, got, tl, whole, tooLong)
		}
		read, err := readAll(bytes.NewReader(stream))
		if (err != nil) != tooLong || !isPrefix(read, whole) || err == nil && len(read) != len(whole) {
			t.Fatalf("reader: %q, %v; parser: %q, too long %v", read, err, whole, tooLong)
		}
		for _, e := range whole {
			if len(e) > testLimit {
				t.Fatalf("event of %d bytes over the limit %d", len(e), testLimit)
			}
		}
	})
}

// FuzzDecodeUsage checks that DecodeUsage never panics, that CachedPrompt
// only reports consistent numbers, and that a decoded usage survives a round
// trip.
func FuzzDecodeUsage(f *testing.F) {
	for _, tc := range usageCases {
		f.Add([]byte(tc.body))
	}
	for _, tc := range hasUsageCases {
		f.Add([]byte(tc.data))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		u, err := DecodeUsage(body)
		if err != nil && u != nil {
			t.Fatalf("usage %+v with error %v", u, err)
		}
		if p, c, ok := u.CachedPrompt(); ok && (c < 0 || c > p) || !ok && (p != 0 || c != 0) {
			t.Fatalf("CachedPrompt = %d, %d, %v", p, c, ok)
		}
		checkRoundTrip(t, body)
		HasUsage(body)
	})
}
