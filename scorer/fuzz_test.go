package scorer

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

// FuzzPick feeds arbitrary prompts (token ids, possibly out of range), models,
// salts and subset hints through the pipeline: it must never panic, and must
// either fail with a documented error or choose an endpoint of the pool.
func FuzzPick(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 2, 0, 0, 0}, "m", "", "")
	f.Add([]byte{}, "m-sql", "t1", "10.0.0.2:8000")
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4}, "m", "salt", " 10.0.0.3:8000 ")
	f.Add(make([]byte, 4*64), "unknown", "", "10.9.9.9:1")
	p := newPipe(f, ScoringConfig{})
	f.Fuzz(func(t *testing.T, raw []byte, model, salt, subset string) {
		ids := make([]int, len(raw)/4)
		for i := range ids {
			ids[i] = int(int32(binary.LittleEndian.Uint32(raw[4*i:])))
		}
		req := completion(ids)
		req.Model, req.CacheSalt = model, salt
		if subset != "" {
			req.Subset = []string{subset}
		}
		d, err := p.s.Pick(context.Background(), req)
		if err != nil {
			if !errors.Is(err, ErrUnknownModel) && !errors.Is(err, ErrNoEndpoint) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		if !slices.Contains(pipePools[0].Endpoints, d.Endpoint) {
			t.Fatalf("chose %q outside the pool", d.Endpoint)
		}
		d.Commit()
		d.Release()
	})
}
