package harness

import (
	"context"
	"os"
	"testing"
)

// EnvoyForTest returns the Envoy binary for a test. When none is installed
// the test is skipped with a hint, except on CI ($CI=true), where a missing
// Envoy would silently turn the end-to-end suite into a no-op, so it fails.
func EnvoyForTest(tb testing.TB) string {
	tb.Helper()
	root, err := ModuleRoot(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	p, err := FindEnvoy(root)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("CI=true but %v", err)
	}
	tb.Skipf("skipping: %v", err)
	return ""
}
