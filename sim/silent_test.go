package sim

import (
	"fmt"
	"net/http"
	"testing"
)

// TestSilentStoreAnswersButStoresNothing checks the silent failure: the
// request succeeds as usual, yet no block is cached, so nothing can be
// published; by header for one request, by rate for a share of them.
func TestSilentStoreAnswersButStoresNothing(t *testing.T) {
	body := func(p string) string { return fmt.Sprintf(`{"model":%q,"prompt":%q}`, DefaultModel, p) }
	t.Run("header", func(t *testing.T) {
		s, ts := startServer(t, Options{BlockSize: 4})
		resp := post(t, ts.URL, "/v1/completions", body(longPrompt("x", 12)), map[string]string{silentStoreHeader: "true"})
		got := lastResponse(t, resp, false)
		if got.Usage == nil || got.Usage.PromptTokens == 0 {
			t.Fatalf("silent request answered without usage: %+v", got)
		}
		if st := s.Engine().CacheState(); len(st.Blocks) != 0 {
			t.Fatalf("cache after a silent store: %d blocks", len(st.Blocks))
		}
		resp = post(t, ts.URL, "/v1/completions", body(longPrompt("x", 12)), nil)
		lastResponse(t, resp, false)
		if st := s.Engine().CacheState(); len(st.Blocks) == 0 {
			t.Fatal("an ordinary request stored nothing")
		}
		resp = post(t, ts.URL, "/v1/completions", body("a"), map[string]string{silentStoreHeader: "maybe"})
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("bad header: status %d, want 400", resp.StatusCode)
		}
	})
	t.Run("rate", func(t *testing.T) {
		stored := func(rate float64, seed uint64) int {
			s, ts := startServer(t, Options{BlockSize: 4, SilentStoreRate: rate, FaultSeed: seed})
			for i := range 40 {
				lastResponse(t, post(t, ts.URL, "/v1/completions", body(longPrompt(fmt.Sprintf("p%d", i), 8)), nil), false)
			}
			return len(s.Engine().CacheState().Blocks)
		}
		all, none := stored(0, 1), stored(1, 1)
		some, again := stored(0.5, 7), stored(0.5, 7)
		if none != 0 || all == 0 || some <= 0 || some >= all {
			t.Fatalf("blocks stored at rate 0: %d, 0.5: %d, 1: %d", all, some, none)
		}
		if some != again {
			t.Fatalf("one seed stored %d then %d blocks", some, again)
		}
	})
	if err := (Options{SilentStoreRate: 1.5}).WithDefaults().Validate(); err == nil {
		t.Error("silent store rate 1.5 accepted")
	}
}
