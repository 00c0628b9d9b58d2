package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warmroute/warmroute/router"
)

// TestReadmeConfigExample keeps the README's configuration example true: it
// must parse strictly into router.Config and validate.
func TestReadmeConfigExample(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "## Configuration")
	if !ok {
		t.Fatal("README has no Configuration section")
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	example, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("README's Configuration section has no yaml block")
	}
	path := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(path, []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := router.Load(path)
	if err != nil {
		t.Fatalf("README example: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("README example does not validate: %v", err)
	}
}
