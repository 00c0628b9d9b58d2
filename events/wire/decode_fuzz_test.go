package wire

import (
	"errors"
	"testing"
)

// FuzzDecodeBatch checks that any input either decodes into a consistent
// batch or fails with ErrMalformed, without panicking or hanging.
func FuzzDecodeBatch(f *testing.F) {
	for _, tc := range decodeCases() {
		f.Add(tc.payload)
	}
	f.Add(benchPayload(4, 16))
	f.Fuzz(func(t *testing.T, payload []byte) {
		var b Batch
		err := DecodeBatch(payload, &b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTooDeep) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		for i, ev := range b.Events {
			if ev.Kind == KindUnknown {
				t.Fatalf("event %d has unknown kind in a decoded batch", i)
			}
			_ = ev.Salt() // extra keys of any shape read without panicking
			for j := range ev.ExtraKeys {
				_ = ev.Opaque(j)
			}
		}
		var again Batch
		if err := DecodeBatch(payload, &again); err != nil || again.Blocks() != b.Blocks() || len(again.Events) != len(b.Events) {
			t.Fatalf("second decode differs: %v", err)
		}
	})
}
