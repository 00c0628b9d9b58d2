package relay

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/warmroute/warmroute/events/wire"
)

// FuzzParseReplayFrames checks that any reply either parses into a seq and
// payload taken from its frames or fails with ErrMalformed, never panics.
func FuzzParseReplayFrames(f *testing.F) {
	seq := binary.BigEndian.AppendUint64(nil, 9)
	seeds := [][][]byte{
		{{}, seq, []byte("p")},                  // old layout
		{{}, []byte("topic"), seq, []byte("p")}, // new layout
		{seq, []byte("p")},                      // no delimiter
		{{}, {1, 2}, []byte("p")},               // short seq
		{seq},                                   // one frame
		{{}, {}, {}, seq, []byte("p")},          // too many
	}
	for _, s := range seeds {
		var fr [5][]byte
		copy(fr[:], s)
		f.Add(uint8(len(s)), fr[0], fr[1], fr[2], fr[3], fr[4])
	}
	f.Fuzz(func(t *testing.T, n uint8, a, b, c, d, e []byte) {
		frames := [][]byte{a, b, c, d, e}[:n%6]
		got, payload, err := parseReplayFrames(frames)
		if err != nil {
			if !errors.Is(err, wire.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		last := frames[len(frames)-1]
		if string(payload) != string(last) || got != binary.BigEndian.Uint64(frames[len(frames)-2]) {
			t.Fatalf("parsed seq %d payload %q from %q", got, payload, frames)
		}
	})
}
