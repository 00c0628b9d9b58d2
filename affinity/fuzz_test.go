package affinity_test

import (
	"testing"

	"github.com/warmroute/warmroute/api"
)

// FuzzAffinityMessage: decoding never panics, and what decodes re-encodes
// to a message that decodes to the same value.
func FuzzAffinityMessage(f *testing.F) {
	f.Add([]byte(`{"v":1,"replica":"r","pool":"p","id":"resp_1","endpoint":"a:1","at":5}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m api.AffinityMessage
		if m.Unmarshal(data) != nil {
			return
		}
		b, err := m.Marshal()
		if err != nil {
			t.Fatalf("a decoded message does not encode: %v", err)
		}
		var back api.AffinityMessage
		if err := back.Unmarshal(b); err != nil || back != m {
			t.Fatalf("round trip %+v -> %+v, %v", m, back, err)
		}
	})
}
