package harness_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/warmroute/warmroute/e2e/envoy"
	"github.com/warmroute/warmroute/e2e/harness"
)

// ExampleStartStack starts three simulators, the router and Envoy, prints
// where clients connect, and stops everything. (Compiled, not run: it needs
// Envoy and builds the binary.)
func ExampleStartStack() {
	ctx := context.Background()
	root, err := harness.ModuleRoot(ctx)
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "stack-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	envoyBin, err := harness.InstallEnvoy(ctx, root, os.Stderr)
	if err != nil {
		log.Fatal(err)
	}
	bin, err := harness.Warmroute(ctx, root, dir)
	if err != nil {
		log.Fatal(err)
	}
	st, err := harness.StartStack(ctx, harness.Options{
		Binary: bin, Envoy: envoyBin, Dir: dir, Template: envoy.Buffered,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	fmt.Println("POST", st.URL("/v1/chat/completions"), "; metrics at", st.Router.MetricsURL())
}
