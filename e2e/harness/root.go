package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// ModuleRoot returns the directory of the warmroute module that contains the
// working directory, asking the go command so that it works from any
// subdirectory (tests run in their package's directory).
func ModuleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("locating module root: %w", err)
	}
	gomod := string(bytes.TrimSpace(out))
	if gomod == "" || gomod == "/dev/null" {
		return "", fmt.Errorf("locating module root: working directory is not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}

// BinaryEnv names the environment variable that points at a prebuilt
// warmroute binary to use instead of building one (a release build, say).
const BinaryEnv = "WARMROUTE_BIN"

// Warmroute returns $WARMROUTE_BIN when set, else builds the binary with
// BuildWarmroute.
func Warmroute(ctx context.Context, root, dir string) (string, error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		if err := executable(p); err != nil {
			return "", fmt.Errorf("using $%s=%s: %w", BinaryEnv, p, err)
		}
		return p, nil
	}
	return BuildWarmroute(ctx, root, dir)
}

// BuildWarmroute compiles ./cmd/warmroute of the module at root into dir and
// returns the binary's path. The go build cache makes repeated builds cheap.
func BuildWarmroute(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "warmroute")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/warmroute")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building warmroute: %w\n%s", err, out)
	}
	return bin, nil
}
