package extproc_test

import (
	"os"
	"testing"

	"github.com/warmroute/warmroute/scorer"
)

// TestMain quarantines decisions for every test (benchmarks turn it off):
// a stream that calls or reads its decision after Done then panics or
// reads poison instead of touching a later request's decision.
func TestMain(m *testing.M) {
	scorer.QuarantineDecisions(true)
	os.Exit(m.Run())
}
